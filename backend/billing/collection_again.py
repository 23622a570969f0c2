"""Collecting a reservation again after the bank returned its direct debit (docs/bank.md).

The sale was invoiced when it was first collected, and that invoice stands: the return put the
customer's receivable back (411) and the reservation back to `reservation_total_due`. Collecting
it again (the admin route, or the retry pass with the key `auto-collect-<id>-<returns>`) is a new
payment order on the same invoice, of the same amount, and its payment entry (512 against 411):
no second invoice, no second sale in the books.
"""

from __future__ import annotations

from backend import clock
from backend.billing import idempotency, records, sepa_mandates
from backend.billing.accounting import ledger
from backend.billing.accounting.entries import paris_day
from backend.billing.models import (
    FinancialStatus,
    Invoice,
    PaymentKind,
    PaymentMethod,
    PaymentOrder,
    PaymentStatus,
    Settlement,
)
from backend.billing.reservations import check_collectable
from backend.errors import Conflict
from backend.marketplace.kyb import require_kyb_approved
from backend.marketplace.models import Reservation
from backend.marketplace.pricing import BillingModel
from backend.model import new_id


def returned_orders(reservation_id: str) -> int:
    """How many collections of the reservation the bank returned."""
    return (PaymentOrder.select().where(PaymentOrder.reservation_id == reservation_id,
                                        PaymentOrder.kind == PaymentKind.RESERVATION_TOTAL,
                                        PaymentOrder.settlement == Settlement.RETURNED).count())


def collect_again(claim: idempotency.Claim, returned_order_id: str, *, industrial_organization_id: str,
                  method: PaymentMethod, user_id: str | None) -> tuple[dict, str | None]:
    """The sale of the returned collection `returned_order_id` collected again, under the
    collection's claim of its key (`collection.collect` found it in its read, not a replay):
    `(stored answer, invoice number)`."""
    returned = PaymentOrder.get_by_id(returned_order_id)
    require_kyb_approved(industrial_organization_id)
    reservation = (Reservation.select().where(Reservation.id == returned.reservation_id,
                                              Reservation.industrial_organization_id == industrial_organization_id)
                   .for_update().first())
    if reservation is None:
        raise Conflict("the reservation is not the organization's", reason="not_due")
    check_collectable(reservation.status, reservation.billing_model, BillingModel.PRINCIPAL_SELLER)
    mandate = sepa_mandates.active_mandate(industrial_organization_id)
    mandate_ref = sepa_mandates.require_mandate(method, mandate.mandate_ref if mandate else None)
    record = records.locked_record(reservation.id)
    if record is None or record.financial_status != FinancialStatus.RESERVATION_TOTAL_DUE:
        status = record.financial_status if record else FinancialStatus.DRAFT.value
        raise Conflict(f"the reservation is not due for collection (financial status {status})",
                       reason="not_due", financialStatus=status)
    now = clock.now()
    order = PaymentOrder.create(id=new_id(), reservation_id=reservation.id, invoice=returned.invoice_id,
                                organization_id=industrial_organization_id, kind=PaymentKind.RESERVATION_TOTAL,
                                method=method, status=PaymentStatus.PAID, amount_cents=returned.amount_cents,
                                mandate_ref=mandate_ref, created_by_user_id=user_id, created_at=now,
                                updated_at=now, paid_at=now)
    invoice = Invoice.get_by_id(returned.invoice_id)
    ledger.post_collection(invoice, amount_cents=order.amount_cents, payment_order_id=order.id,
                           day=paris_day(now))
    records.move(record, FinancialStatus.RESERVATION_TOTAL_PAID)
    answer = {"reservation_id": reservation.id, "payment_order_id": order.id, "invoice_id": invoice.id,
              "financial_status": FinancialStatus.RESERVATION_TOTAL_PAID.value,
              "payment_status": PaymentStatus.PAID.value}
    claim.store(answer)
    return answer, invoice.number
