"""Collection of a `principal_seller` reservation (spec C "Collection flow"), manual or automatic.

`collect` reads as the spec's seven steps, in one transaction (one commit per collection) and
three round trips to PostgreSQL, the session's lookup and the search of a collection the bank
returned aside (their SQL: `collection_sql`; a returned one is `collection_again`'s):

1. the `BEGIN`, the `Idempotency-Key` held and one read of everything the steps need (the key's
   stored answer, the financial record opened `reservation_total_due` when absent, the
   reservation locked `FOR UPDATE`, the industrial organization `FOR SHARE` with its KYB status
   and billing profile, the ad space and store names, the active SEPA mandate);
2. one write statement: the record moved to `reservation_total_paid` (only from due), the
   payment order inserted `paid` (no payment service provider is called, so its `pending` state
   would never be seen outside the transaction), the journal (checked balanced then), the key's
   stored answer, the `invoice.issued` outbox rows;
3. the numbered `platform_sale` invoice with the COMMIT, and its number read back once committed.

The invoice row is written last (the payment order and the journal name its id, checked at
commit): its series' counter row stays locked only from then to the commit, which is what every
collection of the series queues on. Auto-collection uses the key `auto-collect-<reservationId>`
in the same scope, so a manual retry with that key replays it. A collection that fails stores
nothing for the key and leaves the record opened (`reservation_total_due`): the manual collect
route is the retry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from backend import clock, events
from backend.billing import collection_again, collection_sql, idempotency, records, sepa_mandates
from backend.billing.accounting import ledger
from backend.billing.accounting.entries import paris_day
from backend.billing.invoices import InvoiceDraft, Line, issue_invoice
from backend.billing.models import FinancialStatus, Invoice, InvoiceKind, PaymentKind, PaymentMethod, PaymentStatus
from backend.billing.parties import PROFILE_COLUMNS, party_of
from backend.billing.reservations import COLLECTABLE, check_collectable, label_of
from backend.billing.sepa_mandates import require_mandate
from backend.billing.vat import amount_incl_tax_cents, vat_amount_cents, vat_rate_bps
from backend.config import Config
from backend.db import transaction
from backend.errors import Conflict, DomainError, NotFound, ValidationError
from backend.identity import billing_identity
from backend.identity.models import KybStatus
from backend.logs import log_event
from backend.marketplace.kyb import require_kyb_approved
from backend.marketplace.models import Reservation
from backend.marketplace.pricing import BillingModel, resolve_billing_model
from backend.model import new_id

PRINCIPAL_SELLER = BillingModel.PRINCIPAL_SELLER
COLLECT_ROUTE = "billing.reservation.collect"


def collect_path(reservation_id: str) -> str:
    return f"/api/billing/reservations/{reservation_id}/collect"


AUTO_COLLECT_PREFIX = "auto-collect-"


def auto_collect_key(reservation_id: str, returned: int = 0) -> str:
    """The retry pass's key: a new one after each debit the bank returned (docs/bank.md)."""
    return f"{AUTO_COLLECT_PREFIX}{reservation_id}" + (f"-{returned}" if returned else "")


def check_client_key(key: str) -> str:
    """A client's `Idempotency-Key` of a collection: the `auto-collect-` keys are the platform's
    own (API.md), 400 for a client."""
    if key.startswith(AUTO_COLLECT_PREFIX):
        raise ValidationError(f"Idempotency-Key values starting with {AUTO_COLLECT_PREFIX!r} are reserved",
                              fields={"Idempotency-Key": ["reserved"]})
    return key


@dataclass(frozen=True)
class Collected:
    """A collection's answer (the reservation total, a legacy deposit or balance)."""

    reservation_id: str
    payment_order_id: str
    invoice_number: str
    financial_status: str
    payment_status: str
    idempotent: bool = False


def collect(*, reservation_id: str, industrial_organization_id: str, method: PaymentMethod, key: str,
            user_id: str | None, config: Config, auto: bool = False, scope: str | None = None,
            route: str = COLLECT_ROUTE) -> Collected:
    """Collect the reservation total once per `key` (scoped to the industrial organization, or
    `scope` and `route`: the admin route's, API.md)."""
    method = PaymentMethod(method)
    held = collection_key(route=route, path=collect_path(reservation_id),
                          industrial_organization_id=scope or industrial_organization_id, method=method, key=key)
    fields = {"reservationId": reservation_id, "paymentMethod": method.value, "auto": auto}
    with logged(fields), left_due_on_failure(lambda: records.open_collectable(
            reservation_id, industrial_organization_id, PRINCIPAL_SELLER, FinancialStatus.RESERVATION_TOTAL_DUE,
            COLLECTABLE)):
        stored, number = _reservation_total(reservation_id, industrial_organization_id, method, user_id, config, held)
    return collected(stored, fields, number=number)


def _reservation_total(reservation_id: str, industrial_organization_id: str, method: PaymentMethod,
                       user_id: str | None, config: Config, held: idempotency.Key) -> tuple[dict, str | None]:
    """Spec C's seven steps; `(stored answer, invoice number)`, the number None on a replay."""
    with idempotency.claim(held, read=lambda: _collection_row(reservation_id, industrial_organization_id,
                                                              held)) as claim:  # round trip 1
        if claim.replay is not None:
            return claim.replay, None
        row = _found(claim.row, industrial_organization_id)
        if row["returned_order_id"] is not None:  # the bank returned the sale's debit: its invoice collected again
            return collection_again.collect_again(claim, row["returned_order_id"], method=method, user_id=user_id,
                                                  industrial_organization_id=industrial_organization_id)
        # 1. the reservation is approved or completed; 2. its billing model is principal_seller
        check_collectable(row["status"], row["billing_model"], PRINCIPAL_SELLER)
        billing_identity.require_complete(billing_identity.identity_gaps(  # the invoice prints no placeholder
            _profile(row), organization_legal_name=row["organization_legal_name"]))
        mandate_ref = require_mandate(method, row["mandate_ref"])  # 3. sepa_dd: the industrial's active SEPA mandate
        if row["financial_status"] != FinancialStatus.RESERVATION_TOTAL_DUE:  # 5. from reservation_total_due only
            _not_due(reservation_id)
        sale = _sale_invoice(row, reservation_id, industrial_organization_id, user_id)  # 6. the platform_sale invoice
        order_id = new_id()  # 4. the reservation_total payment order, of the invoice's total including VAT
        amount = amount_incl_tax_cents(row["total_cents"], vat_rate_bps(config.platform_vat_rate_percent))
        journal = _journal(row, reservation_id, sale, order_id, config)  # 7.
        answer = {"reservation_id": reservation_id, "payment_order_id": order_id, "invoice_id": sale.invoice_id,
                  "financial_status": FinancialStatus.RESERVATION_TOTAL_PAID.value,
                  "payment_status": PaymentStatus.PAID.value}  # stored before the invoice's number exists
        if not _write(reservation_id, industrial_organization_id, method, mandate_ref, order_id, amount,  # round trip 2
                      user_id, journal, sale.invoice_id, held.store_values(answer)):
            _not_due(reservation_id)  # 5. moved by a concurrent change since the read: nothing written
        number = issue_invoice(sale, config=config, commit=True, published=True).number  # 6., round trip 3
    return answer, number


def collection_key(*, route: str, path: str, industrial_organization_id: str, method: PaymentMethod,
                   key: str) -> idempotency.Key:
    """A collection's `Idempotency-Key`: scoped to the industrial organization and the route, the
    request fingerprinted by its path and payment method."""
    return idempotency.Key(industrial_organization_id, route, key,
                           idempotency.fingerprint("POST", path, {"paymentMethod": method.value}))


@contextmanager
def logged(fields: dict) -> Iterator[None]:
    """The `billing.reservation.collect.requested` and `.failed` lines of a collection (reservation
    total, legacy deposit or balance)."""
    log_event("billing.reservation.collect.requested", "reservation collection requested", "info", **fields)
    try:
        yield
    except DomainError as exc:
        log_event("billing.reservation.collect.failed", "reservation collection failed", "warn", **fields,
                  code=exc.code, errorMessage=exc.message, reason=exc.details.get("reason"))
        raise
    except Exception as exc:
        log_event("billing.reservation.collect.failed", "reservation collection failed", "error", **fields,
                  code="INTERNAL_ERROR", errorMessage=str(exc))
        raise


@contextmanager
def left_due_on_failure(open_record: Callable[[], None]) -> Iterator[None]:
    """When the collection fails, `open_record` commits on its own: the reservation's financial
    record stays opened (due), which the failed transaction's rollback undid. Best effort: the
    collection's own error is what the caller reports, and the next attempt opens it anyway. A
    request refused because another one holds its key (`request_in_flight`) wrote nothing and
    leaves the record to that one: its own opening raced the holder's read of the record (the
    holder's statement, waiting on the row, then saw no record and answered `not_due`)."""
    try:
        yield
    except Exception as exc:
        if isinstance(exc, Conflict) and exc.details.get("reason") == "request_in_flight":
            raise
        try:
            with transaction():
                open_record()
        except Exception:  # noqa: S110 - the collection's own error is raised below
            pass
        raise


def collected(stored: dict, fields: dict, *, number: str | None) -> Collected:
    """The answer from what is stored for the key: `number` is the invoice's, just issued (None:
    a replay, whose stored answer names the invoice by its id, or by its number when it was
    stored with it); the `paid` line of a collection just done."""
    values = dict(stored)
    invoice_id = values.pop("invoice_id", None)
    if invoice_id is not None:
        values["invoice_number"] = number or Invoice.select(Invoice.number).where(Invoice.id == invoice_id).scalar()
    answer = Collected(**values, idempotent=number is None)
    if not answer.idempotent:
        log_event("billing.reservation.collect.paid", "reservation collected", "info", **fields,
                  paymentOrderId=answer.payment_order_id, invoiceNumber=answer.invoice_number)
    return answer


def _collection_row(reservation_id: str, industrial_organization_id: str, held: idempotency.Key) -> dict | None:
    """The key held (`idempotency.HOLD`, the transaction's first statement) and everything read, in
    one round trip (`collection_sql.READ`)."""
    cursor = collection_sql.READ.execute({**records.open_collectable_values(
        reservation_id, industrial_organization_id, PRINCIPAL_SELLER, FinancialStatus.RESERVATION_TOTAL_DUE,
        COLLECTABLE), **held.read_values()}, before=idempotency.HOLD)
    values = cursor.fetchone()
    return dict(zip((column.name for column in cursor.description), values, strict=True)) if values else None


def _found(row: dict | None, industrial_organization_id: str) -> dict:
    """The row of the organization's reservation; 403 while its KYB is not approved (as the route's
    access rule answers), 404 when there is no such reservation."""
    if row is None or row["kyb_status"] != KybStatus.APPROVED:
        require_kyb_approved(industrial_organization_id)
        raise NotFound("reservation not found")
    return row


def _profile(row: dict) -> dict | None:
    """The industrial's billing profile columns read with the reservation (None without a profile)."""
    return {column: row[column] for column in PROFILE_COLUMNS} if row["has_profile"] else None


def _sale_invoice(row: dict, reservation_id: str, industrial_organization_id: str,
                  user_id: str | None) -> InvoiceDraft:
    """Step 6's invoice: the store base and the commission, excluding tax, to the industrial."""
    customer = party_of(organization_id=industrial_organization_id, legal_name=row["organization_legal_name"],
                        siren=row["siren"], profile=_profile(row))
    return InvoiceDraft(
        kind=InvoiceKind.PLATFORM_SALE,
        lines=(Line(label_of(row["space_name"], row["store_name"], row["starts_at"], row["ends_at"]),
                    row["store_base_cents"]),
               Line("Commission de la plateforme", row["commission_cents"])),
        issuer_organization_id=None, customer_organization_id=industrial_organization_id,
        reservation_id=reservation_id, service_starts_at=row["starts_at"], service_ends_at=row["ends_at"],
        created_by_user_id=user_id, paid=True, customer_party=customer,
    )


def _journal(row: dict, reservation_id: str, sale: InvoiceDraft, order_id: str, config: Config) -> dict:
    """Step 7's entries: the sale (411 against 706 and 44571) and its payment (512 against 411),
    including VAT, naming the invoice issued next (its number is filled in on validation)."""
    total = row["total_cents"]
    return ledger.collection_values(
        invoice_id=sale.invoice_id, customer=sale.customer_party, excl_cents=total,
        vat_cents=vat_amount_cents(total, vat_rate_bps(config.platform_vat_rate_percent)), payment_order_id=order_id,
        day=paris_day(clock.now()), reservation_id=reservation_id)


def _write(reservation_id: str, industrial_organization_id: str, method: PaymentMethod, mandate_ref: str | None,
           order_id: str, amount_cents: int, user_id: str | None, journal: dict, invoice_id: str,
           stored: dict) -> bool:
    """`collection_sql.WRITE`: steps 5, 4 and 7, the stored answer and the outbox rows of step 6's
    `invoice.issued`; False when the record was no longer due (nothing written)."""
    now = clock.now()
    event_parts = events.parts(events.INVOICE_ISSUED, invoice_id)
    written, *outbox_ids = collection_sql.WRITE.execute({
        # `id` and `now`, the record's move's, are the payment order's too.
        **records.settle_values(reservation_id, FinancialStatus.RESERVATION_TOTAL_DUE,
                                FinancialStatus.RESERVATION_TOTAL_PAID, now),
        "org": industrial_organization_id, "order": order_id,
        "invoice": invoice_id, "kind": PaymentKind.RESERVATION_TOTAL.value, "method": method.value,
        "paid": PaymentStatus.PAID.value, "user": user_id, "mandate": mandate_ref, "amount": amount_cents,
        **journal, **stored, **{name: value for part in event_parts for name, value in part.params.items()},
    }).fetchone()  # the entries are checked on validation, at the commit
    if written:
        for part, outbox_id in zip(event_parts, outbox_ids, strict=True):
            part.written(outbox_id)
    return bool(written)


def _not_due(reservation_id: str) -> None:
    status = records.status_of(reservation_id)
    raise Conflict(f"the reservation is not due for collection (financial status {status})",
                   reason="not_due", financialStatus=status)


def auto_method(organization_id: str) -> PaymentMethod:
    """How auto-collection collects: by direct debit under the organization's active mandate, else
    by bank transfer."""
    return PaymentMethod.SEPA_DD if sepa_mandates.active_mandate(organization_id) else PaymentMethod.BANK_TRANSFER


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
    method = auto_method(organization_id)
    fields = {"reservationId": reservation_id, "paymentMethod": method.value}
    log_event("billing.reservation.collect.auto_triggered", "auto-collection triggered", "info", **fields)
    try:
        result = collect(reservation_id=reservation_id, industrial_organization_id=organization_id,
                         method=method, user_id=None, config=config, auto=True,
                         key=auto_collect_key(reservation_id, collection_again.returned_orders(reservation_id)))
    except DomainError as exc:
        log_event("billing.reservation.collect.auto_failed", "auto-collection failed", "warn", **fields,
                  code=exc.code, errorMessage=exc.message)
        return None
    except Exception as exc:
        log_event("billing.reservation.collect.auto_failed", "auto-collection failed", "error", **fields,
                  code="INTERNAL_ERROR", errorMessage=str(exc))
        raise
    log_event("billing.reservation.collect.auto_succeeded", "auto-collection succeeded", "info", **fields,
              invoiceNumber=result.invoice_number, idempotent=result.idempotent)
    return result
