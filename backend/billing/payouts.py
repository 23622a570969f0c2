"""Supplier payout (spec C `supplier_settlement_pending` -> `supplier_settlement_paid`; the route is
decided in docs/billing.md): the platform pays the distributor its self-billed invoice.

`POST /api/admin/billing/reservations/{id}/payout` (`billing.manage.all`, `Idempotency-Key`), one
transaction under the financial record's row lock: the reservation is `supplier_settlement_pending`
with its live `supplier_self_billed` invoice; what is due is that invoice less its credit notes
(409 `nothing_to_pay` when credited in full), including VAT on the payment order, less what the
distributor owes back (`settlement.take_debt`: supplier credit notes issued after an earlier
payout), shown as `deductedCents`; when the debt takes all of it, no payment order is made.
Like a collection, no payment service provider is called: the `supplier_payout` payment order
(`bank_transfer` to the distributor) is created `pending` and moved to `paid` at once (the
partial unique index `billing_payment_order_one_payout` admits one live payout per self-billed
invoice).
The journal settles the invoiced payable (debit `supplier_invoiced:<d>`, credit `platform_cash`,
excluding tax like every journal), the invoice becomes `paid`, the financial status
`supplier_settlement_paid`, and an audit entry records the actor.
"""

from __future__ import annotations

from backend import clock
from backend.billing import idempotency, records, settlement
from backend.billing.accounting import ledger
from backend.billing.models import (
    AuditEntry,
    FinancialStatus,
    Invoice,
    InvoiceStatus,
    PaymentKind,
    PaymentMethod,
    PaymentOrder,
    PaymentStatus,
)
from backend.context import current_request_id
from backend.errors import Conflict, DomainError, NotFound
from backend.logs import log_event

ROUTE = "billing.reservation.payout"
SCOPE = "billing.supplier.payout"


def payout_path(reservation_id: str) -> str:
    return f"/api/admin/billing/reservations/{reservation_id}/payout"


def _payout(reservation_id: str, user_id: str | None) -> dict:
    record = records.locked_record(reservation_id)
    if record is None:
        raise NotFound("reservation not found")
    if record.financial_status != FinancialStatus.SUPPLIER_SETTLEMENT_PENDING:
        raise Conflict(f"the reservation is not awaiting its supplier payout (financial status "
                       f"{record.financial_status})", reason="not_settlement_pending",
                       financialStatus=record.financial_status)
    invoice = settlement.live_self_billed(reservation_id)
    if invoice is None:  # only self-billing moves a record to `supplier_settlement_pending`
        raise Conflict("the reservation has no self-billed invoice", reason="not_self_billed")
    due_excl, due_incl = settlement.due_of(invoice)
    if due_excl <= 0:
        raise Conflict("the self-billed invoice is credited in full: nothing to pay", reason="nothing_to_pay",
                       invoiceNumber=invoice.number)
    distributor = invoice.issuer_organization_id
    kept = settlement.take_debt(distributor, settlement.Debt(due_excl, due_incl))
    paid_excl, paid_incl = due_excl - kept.excl_tax_cents, due_incl - kept.cents
    now = clock.now()
    order = None
    if paid_incl > 0:
        order = PaymentOrder.create(
            reservation_id=reservation_id, invoice=invoice.id, organization_id=distributor,
            kind=PaymentKind.SUPPLIER_PAYOUT, method=PaymentMethod.BANK_TRANSFER, status=PaymentStatus.PENDING,
            amount_cents=paid_incl, created_by_user_id=user_id,
        )
        (PaymentOrder.update(status=PaymentStatus.PAID, paid_at=now, updated_at=now)  # pending -> paid
         .where(PaymentOrder.id == order.id).execute())
    if paid_excl > 0:
        ledger.post_journal([
            ledger.Posting(ledger.supplier_invoiced(distributor), ledger.DEBIT, paid_excl),
            ledger.Posting(ledger.PLATFORM_CASH, ledger.CREDIT, paid_excl),
        ], description=f"supplier payout of {invoice.number}", reservation_id=reservation_id, invoice_id=invoice.id,
            payment_order_id=order.id if order else None)
    settlement.record_deduction(distributor, kept, invoice=invoice, payment_order_id=order.id if order else None)
    if invoice.status == InvoiceStatus.ISSUED:
        Invoice.update(status=InvoiceStatus.PAID, paid_at=now, updated_at=now).where(Invoice.id == invoice.id).execute()
    records.move(record, FinancialStatus.SUPPLIER_SETTLEMENT_PAID)
    AuditEntry.create(action=SCOPE, actor_user_id=user_id, reason="supplier payout", reservation_id=reservation_id,
                      invoice_id=invoice.id, payment_order_id=order.id if order else None,
                      details={"amountCents": paid_incl, "amountExclTaxCents": paid_excl, "deductedCents": kept.cents},
                      request_id=current_request_id())
    return {"reservationId": reservation_id, "paymentOrderId": order.id if order else None,
            "invoiceNumber": invoice.number, "organizationId": distributor, "amountExclTaxCents": paid_excl,
            "amountCents": paid_incl, "deductedCents": kept.cents, "financialStatus": record.financial_status,
            "paymentStatus": PaymentStatus.PAID.value}


def pay_out(*, reservation_id: str, key: str, user_id: str | None) -> dict:
    """The payout once per `Idempotency-Key`, scoped to the route and the reservation (API.md)."""
    fields = {"reservationId": reservation_id}
    log_event(f"{SCOPE}.requested", "supplier payout requested", "info", **fields)
    try:
        answer, replayed = idempotency.run_once(
            scope=f"reservation:{reservation_id}", route=ROUTE, key=key,
            request_hash=idempotency.fingerprint("POST", payout_path(reservation_id), {}),
            flow=lambda: _payout(reservation_id, user_id))
    except DomainError as exc:
        log_event(f"{SCOPE}.failed", "supplier payout refused", "warn", **fields, code=exc.code,
                  errorMessage=exc.message, reason=exc.details.get("reason"))
        raise
    except Exception as exc:
        log_event(f"{SCOPE}.failed", "supplier payout failed", "error", **fields, code="INTERNAL_ERROR",
                  errorMessage=str(exc))
        raise
    if not replayed:
        log_event(f"{SCOPE}.paid", "supplier paid out", "info", **fields, paymentOrderId=answer["paymentOrderId"],
                  invoiceNumber=answer["invoiceNumber"], amountCents=answer["amountCents"],
                  deductedCents=answer["deductedCents"])
    return {**answer, "idempotent": replayed}
