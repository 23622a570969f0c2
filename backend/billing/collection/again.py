"""Collecting a reservation again after the bank returned its direct debit (docs/bank.md).

The sale was invoiced when it was first collected, and that invoice stands: the return put the
customer's receivable back (411) and the reservation back to `reservation_total_due`. Collecting
it again (the admin route, or the retry pass with the key `auto-collect-<id>-<returns>`) is a new
payment order on the same invoice, of the same amount, and its payment entry (512 against 411):
no second invoice, no second sale in the books.
"""

from __future__ import annotations

from backend import clock
from backend.billing import records, sepa_mandates
from backend.billing.models import (
    FinancialStatus,
    Invoice,
    InvoiceKind,
    PaymentKind,
    PaymentMethod,
    PaymentOrder,
    PaymentStatus,
    Settlement,
)
from backend.billing.reservations import check_collectable
from backend.marketplace.models import Reservation
from backend.marketplace.pricing import BillingModel


def returned_orders(reservation_id: str) -> int:
    """How many collections of the reservation the bank returned."""
    return (PaymentOrder.select().where(PaymentOrder.reservation_id == reservation_id,
                                        PaymentOrder.kind == PaymentKind.RESERVATION_TOTAL,
                                        PaymentOrder.settlement == Settlement.RETURNED).count())


def returned_order(reservation_id: str) -> PaymentOrder | None:
    """The reservation's last collection of its sale that the bank returned (None: none was)."""
    return (PaymentOrder.select(PaymentOrder).join(Invoice)
            .where(PaymentOrder.reservation_id == reservation_id, PaymentOrder.kind == PaymentKind.RESERVATION_TOTAL,
                   PaymentOrder.settlement == Settlement.RETURNED, Invoice.kind == InvoiceKind.PLATFORM_SALE)
            .order_by(PaymentOrder.returned_on.desc(), PaymentOrder.created_at.desc()).first())


def collect_again(reservation: Reservation, returned: PaymentOrder, *, method: PaymentMethod,
                  user_id: str | None) -> tuple[PaymentOrder, Invoice]:
    """The sale of the returned collection `returned` collected again, in the collection's
    transaction (`collect.collect`, which locked `reservation` and checked its customer's KYB):
    the new payment order and the invoice it pays."""
    check_collectable(reservation.status, reservation.billing_model, BillingModel.PRINCIPAL_SELLER)
    mandate_ref = sepa_mandates.mandate_ref_for(reservation.industrial_organization_id, method)
    records.move_due(reservation.id, FinancialStatus.RESERVATION_TOTAL_DUE, FinancialStatus.RESERVATION_TOTAL_PAID)
    now = clock.now()
    order = PaymentOrder.create(reservation_id=reservation.id, invoice=returned.invoice_id,
                                organization_id=reservation.industrial_organization_id,
                                kind=PaymentKind.RESERVATION_TOTAL, method=method, status=PaymentStatus.PAID,
                                amount_cents=returned.amount_cents, mandate_ref=mandate_ref,
                                created_by_user_id=user_id, created_at=now, updated_at=now, paid_at=now)
    return order, Invoice.get_by_id(returned.invoice_id)  # its payment posts when the bank moves it
