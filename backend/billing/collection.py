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

The `Idempotency-Key` wraps the flow (`idempotency.run_once`); auto-collection uses the key
`auto-collect-<reservationId>` in the same scope, so a manual retry with that key replays it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from backend import clock
from backend.billing import idempotency, ledger, mandates, records
from backend.billing.invoices import InvoiceDraft, Line, issue_invoice
from backend.billing.models import (
    FinancialStatus,
    InvoiceKind,
    PaymentKind,
    PaymentMethod,
    PaymentOrder,
    PaymentStatus,
)
from backend.billing.vat import amount_incl_tax_cents, vat_rate_bps
from backend.config import Config
from backend.errors import Conflict, DomainError, NotFound
from backend.logs import log_event
from backend.marketplace.kyb import require_kyb_approved
from backend.marketplace.models import AdSpace, Reservation, ReservationStatus, Store
from backend.marketplace.pricing import BillingModel, resolve_billing_model

COLLECTABLE = frozenset({ReservationStatus.APPROVED, ReservationStatus.COMPLETED})
COLLECT_ROUTE = "billing.reservation.collect"


def collect_path(reservation_id: str) -> str:
    return f"/api/billing/reservations/{reservation_id}/collect"


def auto_collect_key(reservation_id: str) -> str:
    return f"auto-collect-{reservation_id}"


@dataclass(frozen=True)
class Collected:
    answer: dict  # {reservationId, paymentOrderId, invoiceNumber, financialStatus, paymentStatus, idempotent}
    idempotent: bool


def collect(*, reservation_id: str, industrial_organization_id: str, method: PaymentMethod, key: str,
            user_id: str | None, config: Config, auto: bool = False) -> Collected:
    """Collect the reservation total once per `key` (scoped to the industrial organization)."""
    method = PaymentMethod(method)

    def prepare() -> None:
        reservation = eligible_reservation(reservation_id, industrial_organization_id, BillingModel.PRINCIPAL_SELLER)
        records.open_record(reservation, FinancialStatus.RESERVATION_TOTAL_DUE)

    return run_collection(
        route=COLLECT_ROUTE, path=collect_path(reservation_id), reservation_id=reservation_id,
        industrial_organization_id=industrial_organization_id, method=method, key=key, prepare=prepare,
        flow=lambda: _collect(reservation_id, industrial_organization_id, method, user_id, config),
        log_fields={"auto": auto},
    )


def run_collection(*, route: str, path: str, reservation_id: str, industrial_organization_id: str,
                   method: PaymentMethod, key: str, prepare: Callable[[], None], flow: Callable[[], dict],
                   log_fields: dict) -> Collected:
    """A collection flow (reservation total, legacy deposit or balance) run once per key, with
    the `billing.reservation.collect.*` telemetry. `prepare` (once the key is claimed; not on a
    replay) checks eligibility and opens the financial record, committed on its own: a failing
    flow leaves the reservation due."""
    request_hash = idempotency.fingerprint("POST", path, {"paymentMethod": method.value})
    fields = {"reservationId": reservation_id, "paymentMethod": method.value, **log_fields}
    log_event("billing.reservation.collect.requested", "reservation collection requested", "info", **fields)
    try:
        answer, replayed = idempotency.run_once(scope=industrial_organization_id, route=route, key=key,
                                                request_hash=request_hash, prepare=prepare, flow=flow)
    except DomainError as exc:
        log_event("billing.reservation.collect.failed", "reservation collection failed", "warn", **fields,
                  code=exc.code, errorMessage=exc.message, reason=exc.details.get("reason"))
        raise
    except Exception as exc:
        log_event("billing.reservation.collect.failed", "reservation collection failed", "error", **fields,
                  code="INTERNAL_ERROR", errorMessage=str(exc))
        raise
    if not replayed:
        log_event("billing.reservation.collect.paid", "reservation collected", "info", **fields,
                  paymentOrderId=answer["paymentOrderId"], invoiceNumber=answer["invoiceNumber"])
    return Collected({**answer, "idempotent": replayed}, replayed)


def _scoped(reservation_id: str, industrial_organization_id: str):
    return Reservation.select().where(Reservation.id == reservation_id,
                                      Reservation.industrial_organization_id == industrial_organization_id)


def eligible_reservation(reservation_id: str, industrial_organization_id: str, model: BillingModel, *,
              lock: bool = False) -> Reservation:
    query = _scoped(reservation_id, industrial_organization_id)
    reservation = (query.for_update() if lock else query).first()
    if reservation is None:
        raise NotFound("reservation not found")
    check_collectable(reservation, model)
    return reservation


def check_collectable(reservation: Reservation, model: BillingModel) -> None:
    """Steps 1-2: `approved` or `completed`, and billed under `model` (409 otherwise)."""
    if reservation.status not in COLLECTABLE:
        raise Conflict(f"the reservation is {reservation.status}: only an approved or completed reservation is "
                       "collected", reason="reservation_not_approved", status=reservation.status)
    actual = resolve_billing_model(reservation.billing_model)
    if actual is not model:
        raise Conflict(f"the reservation is billed under {actual}, not {model}", reason=f"not_{model.value}",
                       billingModel=actual.value)


def mandate_ref_for(organization_id: str, method: PaymentMethod) -> str | None:
    """Step 3: the active SEPA mandate's reference for `sepa_dd` (409 without one)."""
    if method is not PaymentMethod.SEPA_DD:
        return None
    mandate = mandates.active_mandate(organization_id)
    if mandate is None:
        raise Conflict("the organization has no active SEPA mandate", reason="sepa_mandate_missing")
    return mandate.mandate_ref


def service_label(reservation: Reservation) -> str:
    place = (AdSpace.select(AdSpace.name, Store.name.alias("store_name")).join(Store)
             .where(AdSpace.id == reservation.ad_space_id).dicts().get())
    return (f"Emplacement {place['name']}, {place['store_name']}, du {reservation.starts_at:%d/%m/%Y} au "
            f"{reservation.ends_at:%d/%m/%Y}")


def _collect(reservation_id: str, industrial_organization_id: str, method: PaymentMethod, user_id: str | None,
             config: Config) -> dict:
    require_kyb_approved(industrial_organization_id)
    reservation = eligible_reservation(reservation_id, industrial_organization_id, BillingModel.PRINCIPAL_SELLER,
                            lock=True)  # 1, 2 (again, under the lock)
    mandate_ref = mandate_ref_for(industrial_organization_id, method)  # 3
    record = records.locked_record(reservation.id)
    if record is None or record.financial_status != FinancialStatus.RESERVATION_TOTAL_DUE:
        status = record.financial_status if record else FinancialStatus.DRAFT.value
        raise Conflict(f"the reservation is not due for collection (financial status {status})",
                       reason="not_due", financialStatus=status)
    draft = InvoiceDraft(
        kind=InvoiceKind.PLATFORM_SALE,
        lines=(Line(service_label(reservation), record.store_base_cents),
               Line("Commission de la plateforme", record.commission_cents)),
        issuer_organization_id=None, customer_organization_id=industrial_organization_id,
        reservation_id=reservation.id, service_starts_at=reservation.starts_at,
        service_ends_at=reservation.ends_at, created_by_user_id=user_id, paid=True,
    )
    order = PaymentOrder.create(  # 4: the total including the VAT the invoice will freeze
        reservation_id=reservation.id, invoice=draft.invoice_id, organization_id=industrial_organization_id,
        kind=PaymentKind.RESERVATION_TOTAL, method=method, status=PaymentStatus.PENDING,
        amount_cents=amount_incl_tax_cents(record.total_cents, vat_rate_bps(config.platform_vat_rate_percent)),
        mandate_ref=mandate_ref, created_by_user_id=user_id,
    )
    now = clock.now()
    (PaymentOrder.update(status=PaymentStatus.PAID, paid_at=now, updated_at=now)  # pending -> paid
     .where(PaymentOrder.id == order.id).execute())
    records.move(record, FinancialStatus.RESERVATION_TOTAL_PAID)  # 5
    ledger.post_journal([  # 7, naming the invoice issued next (its foreign key is checked at commit)
        ledger.Posting(ledger.industrial_receivable(industrial_organization_id), ledger.DEBIT, record.total_cents),
        ledger.Posting(ledger.PLATFORM_REVENUE, ledger.CREDIT, record.commission_cents),
        ledger.Posting(ledger.supplier_payable(reservation.distributor_organization_id), ledger.CREDIT,
                       record.store_base_cents),
    ], description=f"collection of reservation {reservation.id}", reservation_id=reservation.id,
        invoice_id=draft.invoice_id, payment_order_id=order.id)
    invoice = issue_invoice(draft, config=config)  # 6, last: its number's counter row is locked until the commit
    return {"reservationId": reservation.id, "paymentOrderId": order.id, "invoiceNumber": invoice.number,
            "financialStatus": record.financial_status, "paymentStatus": PaymentStatus.PAID.value}


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
    method = PaymentMethod.SEPA_DD if mandates.active_mandate(organization_id) else PaymentMethod.BANK_TRANSFER
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
