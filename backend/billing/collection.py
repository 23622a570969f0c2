"""Collection of a `principal_seller` reservation (spec C "Collection flow"), manual or automatic.

One transaction, the seven steps of spec C: the reservation is `approved` or `completed`; its
billing model is `principal_seller`; `sepa_dd` resolves the industrial's active SEPA mandate; a
`reservation_total` payment order is created and moved `pending` to `paid` (no payment service
provider is called); the financial status moves `reservation_total_due` to
`reservation_total_paid`; the `platform_sale` invoice is issued (store base + commission,
excluding tax; the industrial pays it including VAT); three ledger entries are written. Inside
the transaction the invoice row is written last (the payment order and the ledger name its id,
checked at commit): its number's counter row stays locked only from then to the commit, which
is what every collection of the series queues on.

One commit per collection and three round trips to PostgreSQL (the session's lookup aside): the
`BEGIN`, the key held (`idempotency.HOLD`) and one read of everything (the key's record, the
financial record opened `reservation_total_due` when absent, the reservation locked `FOR UPDATE`,
the industrial organization `FOR SHARE` with its KYB status and billing profile, the ad space and
store names, the active SEPA mandate); then one write statement (the record moved to
`reservation_total_paid` by a conditional UPDATE, the payment order inserted `paid`: no payment
service provider is called, so its `pending` state would never be seen outside the transaction;
the journal, checked balanced then; the stored answer; the `invoice.issued` outbox rows); then the
numbered invoice with the COMMIT and the number read back once committed.

The `Idempotency-Key` wraps the flow (`idempotency.run_once`); auto-collection uses the key
`auto-collect-<reservationId>` in the same scope, so a manual retry with that key replays it. A
failing flow stores nothing for the key and leaves the record opened (`reservation_total_due`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from peewee import DatabaseError

from backend import clock, events, outbox, prepared
from backend.billing import idempotency, records, sepa_mandates
from backend.billing.accounting import ledger
from backend.billing.invoices import InvoiceDraft, Line, issue_invoice
from backend.billing.models import (
    FinancialStatus,
    Invoice,
    InvoiceKind,
    PaymentKind,
    PaymentMethod,
    PaymentStatus,
)
from backend.billing.parties import PROFILE_COLUMNS, party_of
from backend.billing.reservations import COLLECTABLE, check_collectable, label_of
from backend.billing.sepa_mandates import require_mandate
from backend.billing.vat import amount_incl_tax_cents, vat_rate_bps
from backend.config import Config
from backend.errors import Conflict, DomainError, NotFound, ValidationError
from backend.identity.models import KybStatus
from backend.logs import log_event
from backend.marketplace.kyb import require_kyb_approved
from backend.marketplace.models import Reservation
from backend.marketplace.pricing import BillingModel, resolve_billing_model
from backend.model import new_id

COLLECT_ROUTE = "billing.reservation.collect"


def collect_path(reservation_id: str) -> str:
    return f"/api/billing/reservations/{reservation_id}/collect"


AUTO_COLLECT_PREFIX = "auto-collect-"


def auto_collect_key(reservation_id: str) -> str:
    return f"{AUTO_COLLECT_PREFIX}{reservation_id}"


def check_client_key(key: str) -> str:
    """A client's `Idempotency-Key` of a collection: the `auto-collect-` keys are the platform's
    own (API.md), 400 for a client."""
    if key.startswith(AUTO_COLLECT_PREFIX):
        raise ValidationError(f"Idempotency-Key values starting with {AUTO_COLLECT_PREFIX!r} are reserved",
                              fields={"Idempotency-Key": ["reserved"]})
    return key


@dataclass(frozen=True)
class Collected:
    answer: dict  # {reservationId, paymentOrderId, invoiceNumber, financialStatus, paymentStatus, idempotent}
    idempotent: bool


def collect(*, reservation_id: str, industrial_organization_id: str, method: PaymentMethod, key: str,
            user_id: str | None, config: Config, auto: bool = False, scope: str | None = None,
            route: str = COLLECT_ROUTE) -> Collected:
    """Collect the reservation total once per `key` (scoped to the industrial organization, or
    `scope` and `route`: the admin route's, API.md)."""
    method = PaymentMethod(method)
    held = collection_key(route=route, path=collect_path(reservation_id),
                          industrial_organization_id=scope or industrial_organization_id, method=method, key=key)
    return run_collection(
        route=route, path=collect_path(reservation_id), reservation_id=reservation_id, scope=scope,
        industrial_organization_id=industrial_organization_id, method=method, key=key,
        prepare=lambda: records.open_collectable(reservation_id, industrial_organization_id,
                                                 BillingModel.PRINCIPAL_SELLER, FinancialStatus.RESERVATION_TOTAL_DUE,
                                                 COLLECTABLE),
        flow=lambda: _collect(reservation_id, industrial_organization_id, method, user_id, config, held),
        log_fields={"auto": auto}, prepare_in_flow=True, read_in_flow=True,
    )


def collection_key(*, route: str, path: str, industrial_organization_id: str, method: PaymentMethod,
                   key: str) -> idempotency.Key:
    """A collection's `Idempotency-Key`: scoped to the industrial organization and the route, the
    request fingerprinted by its path and payment method."""
    return idempotency.Key(industrial_organization_id, route, key,
                           idempotency.fingerprint("POST", path, {"paymentMethod": method.value}))


def run_collection(*, route: str, path: str, reservation_id: str, industrial_organization_id: str,
                   method: PaymentMethod, key: str, prepare: Callable[[], None],
                   flow: Callable[[], dict | idempotency.Stored],
                   log_fields: dict, prepare_in_flow: bool = False, read_in_flow: bool = False,
                   scope: str | None = None) -> Collected:
    """A collection flow (reservation total, legacy deposit or balance) run once per key, with
    the `billing.reservation.collect.*` telemetry. `prepare` (once the key is held; not on a
    replay; by the flow itself with `prepare_in_flow`) opens the financial record, which a failing
    flow leaves opened; with `read_in_flow` the flow reads the key's record itself (`run_once`)."""
    held = collection_key(route=route, path=path, industrial_organization_id=scope or industrial_organization_id,
                          method=method, key=key)
    fields = {"reservationId": reservation_id, "paymentMethod": method.value, **log_fields}
    log_event("billing.reservation.collect.requested", "reservation collection requested", "info", **fields)
    try:
        answer, replayed = idempotency.run_once(scope=held.scope, route=held.route, key=held.key,
                                                request_hash=held.request_hash, prepare=prepare, flow=flow,
                                                prepare_in_flow=prepare_in_flow, read_in_flow=read_in_flow)
    except DomainError as exc:
        log_event("billing.reservation.collect.failed", "reservation collection failed", "warn", **fields,
                  code=exc.code, errorMessage=exc.message, reason=exc.details.get("reason"))
        raise
    except Exception as exc:
        log_event("billing.reservation.collect.failed", "reservation collection failed", "error", **fields,
                  code="INTERNAL_ERROR", errorMessage=str(exc))
        raise
    if replayed and "invoiceId" in answer:
        answer = _with_number(answer, Invoice.select(Invoice.number).where(Invoice.id == answer["invoiceId"]).scalar())
    if not replayed:
        log_event("billing.reservation.collect.paid", "reservation collected", "info", **fields,
                  paymentOrderId=answer["paymentOrderId"], invoiceNumber=answer["invoiceNumber"])
    return Collected({**answer, "idempotent": replayed}, replayed)


# The financial record opened when absent (`records.OPEN_COLLECTABLE`), then the key's record, steps
# 1-3, the record and the invoice's customer in one read: the reservation locked for the collection,
# its industrial organization shared-locked (a KYB review cannot commit before this transaction).
# The financial record comes from the table, or from the INSERT of the same statement (which the
# statement's read cannot see). The key is held by the statement sent before it in the same round
# trip (`idempotency.HOLD`, `run_once` with `read_in_flow`), so the key's record shows what its
# last holder committed.
_RECORD = ("financial_status", "store_base_cents", "commission_cents", "total_cents")
_COLLECTION_READ = prepared.Statement("billing_collection_read", (
    f"WITH opened AS ({records.OPEN_COLLECTABLE} RETURNING {', '.join(_RECORD)})"  # noqa: S608 (constants only)
    " SELECT r.status, r.billing_model, r.distributor_organization_id, r.starts_at, r.ends_at,"
    " a.name AS space_name, s.name AS store_name, o.kyb_status, o.legal_name AS organization_legal_name, o.siren,"
    " bp.organization_id IS NOT NULL AS has_profile, "
    + ", ".join(f"bp.{column}" for column in PROFILE_COLUMNS) + ", "
    + ", ".join(f"coalesce(f.{column}, opened.{column}) AS {column}" for column in _RECORD)
    + ", (SELECT m.mandate_ref FROM billing_sepa_mandate m WHERE m.organization_id = o.id AND m.status = 'active'"  # noqa: S608
    f" LIMIT 1) AS mandate_ref, {idempotency.READ_COLUMNS}"
    " FROM reservation r JOIN organization o ON o.id = r.industrial_organization_id"
    " JOIN ad_space a ON a.id = r.ad_space_id JOIN store s ON s.id = a.store_id"
    " LEFT JOIN billing_profile bp ON bp.organization_id = o.id"
    " LEFT JOIN billing_financial_record f ON f.reservation_id = r.id LEFT JOIN opened ON true"
    f" {idempotency.READ_JOIN}"
    " WHERE r.id = %(id)s AND r.industrial_organization_id = %(org)s FOR UPDATE OF r FOR SHARE OF o"
))


def _collection_row(reservation_id: str, industrial_organization_id: str, held: idempotency.Key) -> dict:
    """The key held (`idempotency.HOLD`, the transaction's first statement) and the read, in one round trip."""
    try:
        cursor = _COLLECTION_READ.execute({**records.open_collectable_params(
            reservation_id, industrial_organization_id, BillingModel.PRINCIPAL_SELLER,
            FinancialStatus.RESERVATION_TOTAL_DUE, COLLECTABLE), **held.read_params()}, before=idempotency.HOLD)
    except DatabaseError as exc:
        held.check_hold(exc)  # 409 while another request holds the key
        raise
    values = cursor.fetchone()
    row = dict(zip((column.name for column in cursor.description), values, strict=True)) if values else None
    if row is not None:
        held.check_read(row)  # a replay, 422 or 409 ends the flow here
    if row is None or row["kyb_status"] != KybStatus.APPROVED:
        require_kyb_approved(industrial_organization_id)  # 403 first, as the route's access rule does
        raise NotFound("reservation not found")
    return row


# Steps 4, 5 and 7, the key's answer and the outbox rows of the invoice's `invoice.issued` in one
# statement: the record moved from due to paid (which locks it), and only then the payment order
# (paid at once: no payment service provider is called, so its `pending` state would never be seen
# outside the transaction) and the journal. When the record was not due, the flow raises: the
# transaction, the outbox rows with it, is rolled back.
_EVENT_PARTS = events.part_names(events.INVOICE_ISSUED)
_WRITES = prepared.Statement("billing_collection_writes", (
    f"WITH settled AS ({records.SETTLE}),"  # noqa: S608 (constants only)
    " paid AS (INSERT INTO billing_payment_order (id, reservation_id, invoice_id, organization_id, kind, method,"
    " status, amount_cents, mandate_ref, created_by_user_id, created_at, updated_at, paid_at)"
    " SELECT %(order)s, %(id)s, %(invoice)s, %(org)s, %(kind)s, %(method)s, %(paid)s, %(amount)s::bigint,"
    " %(mandate)s, %(user)s, %(now)s::timestamptz, %(now)s, %(now)s FROM settled RETURNING id),"
    f" journal AS ({ledger.journal_sql(3, when='EXISTS (SELECT FROM paid)')}), stored AS ({idempotency.STORE})"
    + "".join(f", {name} AS ({outbox.part_sql(name)})" for name in _EVENT_PARTS)
    + " SELECT (SELECT count(*) FROM paid)" + "".join(f", (SELECT id FROM {name})" for name in _EVENT_PARTS)  # noqa: S608
))


def _collect(reservation_id: str, industrial_organization_id: str, method: PaymentMethod, user_id: str | None,
             config: Config, held: idempotency.Key) -> idempotency.Stored:
    row = _collection_row(reservation_id, industrial_organization_id, held)
    check_collectable(row["status"], row["billing_model"], BillingModel.PRINCIPAL_SELLER)  # 1, 2
    mandate_ref = require_mandate(method, row["mandate_ref"])  # 3
    if row["financial_status"] != FinancialStatus.RESERVATION_TOTAL_DUE:
        _not_due(reservation_id)
    store_base_cents, commission_cents, total_cents = (row[name] for name in _RECORD[1:])
    customer = party_of(organization_id=industrial_organization_id, legal_name=row["organization_legal_name"],
                        siren=row["siren"],
                        profile={column: row[column] for column in PROFILE_COLUMNS} if row["has_profile"] else None)
    draft = InvoiceDraft(
        kind=InvoiceKind.PLATFORM_SALE,
        lines=(Line(label_of(row["space_name"], row["store_name"], row["starts_at"], row["ends_at"]),
                    store_base_cents),
               Line("Commission de la plateforme", commission_cents)),
        issuer_organization_id=None, customer_organization_id=industrial_organization_id,
        reservation_id=reservation_id, service_starts_at=row["starts_at"], service_ends_at=row["ends_at"],
        created_by_user_id=user_id, paid=True, customer_party=customer,
    )
    now, order_id = clock.now(), new_id()
    answer = {"reservationId": reservation_id, "paymentOrderId": order_id, "invoiceId": draft.invoice_id,
              "financialStatus": FinancialStatus.RESERVATION_TOTAL_PAID.value,
              "paymentStatus": PaymentStatus.PAID.value}
    _, journal = ledger.journal_params([  # 7, naming the invoice issued next (checked at commit)
        ledger.Posting(ledger.industrial_receivable(industrial_organization_id), ledger.DEBIT, total_cents),
        ledger.Posting(ledger.PLATFORM_REVENUE, ledger.CREDIT, commission_cents),
        ledger.Posting(ledger.supplier_payable(row["distributor_organization_id"]), ledger.CREDIT, store_base_cents),
    ], description=f"collection of reservation {reservation_id}", reservation_id=reservation_id,
        invoice_id=draft.invoice_id, payment_order_id=order_id)
    records.check_transition(FinancialStatus.RESERVATION_TOTAL_DUE, FinancialStatus.RESERVATION_TOTAL_PAID)
    event_parts = events.parts(events.INVOICE_ISSUED, draft.invoice_id)  # 6's event, recorded here
    written, *outbox_ids = _WRITES.execute({
        "status": FinancialStatus.RESERVATION_TOTAL_PAID.value, "current": FinancialStatus.RESERVATION_TOTAL_DUE.value,
        "now": now, "id": reservation_id, "org": industrial_organization_id, "order": order_id,
        "invoice": draft.invoice_id, "kind": PaymentKind.RESERVATION_TOTAL.value, "method": method.value,
        "paid": PaymentStatus.PAID.value, "user": user_id, "mandate": mandate_ref,
        # 4: the total including the VAT the invoice will freeze
        "amount": amount_incl_tax_cents(total_cents, vat_rate_bps(config.platform_vat_rate_percent)),
        **journal, **held.store_params(answer), **{name: value for part in event_parts for name, value in
                                                   part.params.items()},
    }, before=ledger.CHECK_BALANCE_NOW).fetchone()  # the journal checked now, not under the counter's lock
    if not written:  # 5: moved by a concurrent change since the read
        _not_due(reservation_id)
    for part, outbox_id in zip(event_parts, outbox_ids, strict=True):
        part.written(outbox_id)

    def issue(stored: dict) -> dict:  # 6, last: its number's counter row is locked until the commit, sent with it
        return _with_number(stored, issue_invoice(draft, config=config, commit=True, published=True).number)

    return idempotency.Stored(answer, issue, stored=True)  # the answer stored first, then the invoice


def _not_due(reservation_id: str) -> None:
    status = records.status_of(reservation_id)
    raise Conflict(f"the reservation is not due for collection (financial status {status})",
                   reason="not_due", financialStatus=status)


def _with_number(answer: dict, number: str) -> dict:
    """The answer as the client sees it: the invoice's number where the stored answer names its id
    (stored before the number was allocated); answers stored with the number pass unchanged."""
    if "invoiceId" not in answer:
        return answer
    shown = {name: value for name, value in answer.items() if name != "invoiceId"}
    return {**shown, "invoiceNumber": number}


def auto_collect(reservation_id: str, *, config: Config) -> Collected | None:
    """The `reservation.approved` subscriber: collect asynchronously, never touching the approval.
    A domain refusal is logged (`auto_failed`) and leaves `reservation_total_due` for the manual
    route; an unexpected error is logged and raised, so the worker retries it."""
    reservation = Reservation.get_or_none(Reservation.id == reservation_id)
    if reservation is None or reservation.status not in COLLECTABLE:
        return None
    if resolve_billing_model(reservation.billing_model) is not BillingModel.PRINCIPAL_SELLER:
        log_event("billing.reservation.collect.auto_skipped", "auto-collection skipped: not principal_seller",
                  "info", reservationId=reservation_id, billingModel=BillingModel.LEGACY_MANDATE.value)
        return None
    organization_id = reservation.industrial_organization_id
    method = PaymentMethod.SEPA_DD if sepa_mandates.active_mandate(organization_id) else PaymentMethod.BANK_TRANSFER
    fields = {"reservationId": reservation_id, "paymentMethod": method.value}
    log_event("billing.reservation.collect.auto_triggered", "auto-collection triggered", "info", **fields)
    try:
        result = collect(reservation_id=reservation_id, industrial_organization_id=organization_id,
                         method=method, key=auto_collect_key(reservation_id), user_id=None, config=config,
                         auto=True)
    except DomainError as exc:
        log_event("billing.reservation.collect.auto_failed", "auto-collection failed", "warn", **fields,
                  code=exc.code, errorMessage=exc.message)
        return None
    except Exception as exc:
        log_event("billing.reservation.collect.auto_failed", "auto-collection failed", "error", **fields,
                  code="INTERNAL_ERROR", errorMessage=str(exc))
        raise
    log_event("billing.reservation.collect.auto_succeeded", "auto-collection succeeded", "info", **fields,
              invoiceNumber=result.answer["invoiceNumber"], idempotent=result.idempotent)
    return result
