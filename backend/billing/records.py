"""The reservation financial record: billing model, financial status and the frozen amounts.

A reservation has no record until billing first touches it (its status reads `draft`); the
reservation-total collection writes `reservation_total_due` directly (spec C: "not a formal
transition"), in a transaction of its own, so a collection that fails afterwards leaves the
reservation due and the manual collect route is the retry.
"""

from __future__ import annotations

from backend import clock
from backend.billing.models import FinancialRecord, FinancialStatus
from backend.db import transaction
from backend.errors import Conflict
from backend.marketplace.models import Reservation
from backend.marketplace.pricing import resolve_billing_model

# The nominal transitions of spec C ("States and transitions"); cancellation and write-off are
# reachable from most statuses (no route moves to them yet).
TRANSITIONS: dict[FinancialStatus, frozenset[FinancialStatus]] = {
    FinancialStatus.DRAFT: frozenset({FinancialStatus.DEPOSIT_DUE, FinancialStatus.RESERVATION_TOTAL_DUE,
                                      FinancialStatus.CANCELLED}),
    FinancialStatus.DEPOSIT_DUE: frozenset({FinancialStatus.DEPOSIT_PAID, FinancialStatus.CANCELLED}),
    FinancialStatus.DEPOSIT_PAID: frozenset({FinancialStatus.BALANCE_DUE, FinancialStatus.CANCELLED}),
    FinancialStatus.BALANCE_DUE: frozenset({FinancialStatus.BALANCE_PAID, FinancialStatus.CANCELLED}),
    FinancialStatus.BALANCE_PAID: frozenset(),
    FinancialStatus.RESERVATION_TOTAL_DUE: frozenset({FinancialStatus.RESERVATION_TOTAL_PAID,
                                                      FinancialStatus.CANCELLED}),
    FinancialStatus.RESERVATION_TOTAL_PAID: frozenset({
        FinancialStatus.PARTIALLY_REFUNDED, FinancialStatus.FULLY_REFUNDED,
        FinancialStatus.SUPPLIER_SETTLEMENT_PENDING, FinancialStatus.WRITTEN_OFF, FinancialStatus.CANCELLED}),
    FinancialStatus.PARTIALLY_REFUNDED: frozenset({FinancialStatus.PARTIALLY_REFUNDED,
                                                   FinancialStatus.FULLY_REFUNDED,
                                                   FinancialStatus.SUPPLIER_SETTLEMENT_PENDING,
                                                   FinancialStatus.WRITTEN_OFF}),
    FinancialStatus.FULLY_REFUNDED: frozenset(),
    FinancialStatus.SUPPLIER_SETTLEMENT_PENDING: frozenset({FinancialStatus.SUPPLIER_SETTLEMENT_PAID}),
    FinancialStatus.SUPPLIER_SETTLEMENT_PAID: frozenset(),
    FinancialStatus.CANCELLED: frozenset(),
    FinancialStatus.WRITTEN_OFF: frozenset(),
}


def open_record(reservation: Reservation, status: FinancialStatus) -> FinancialRecord:
    """The reservation's record, created at `status` with the reservation's frozen amounts when
    absent (concurrent callers create it once); an existing record is left as it is."""
    with transaction():
        FinancialRecord.insert(
            reservation_id=reservation.id,
            billing_model=resolve_billing_model(reservation.billing_model).value,
            financial_status=status,
            store_base_cents=reservation.base_amount_cents,
            commission_cents=reservation.commission_amount_cents,
            total_cents=reservation.total_amount_cents,
            commission_rate_bps=reservation.commission_rate_bps,
        ).on_conflict_ignore().execute()
    return FinancialRecord.get_by_id(reservation.id)


def locked_record(reservation_id: str) -> FinancialRecord | None:
    return FinancialRecord.select().where(FinancialRecord.reservation_id == reservation_id).for_update().first()


def move(record: FinancialRecord, status: FinancialStatus, **changes) -> None:
    """Move a locked record along the spec C tree; 409 for a move the tree does not have."""
    current = FinancialStatus(record.financial_status)
    if status not in TRANSITIONS[current]:
        raise Conflict(f"the financial status is {current}, it cannot become {status}",
                       reason="financial_status", financialStatus=current.value)
    record.financial_status = status
    record.updated_at = clock.now()
    for name, value in changes.items():
        setattr(record, name, value)
    record.save()
