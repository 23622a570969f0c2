"""The reservation financial record: billing model, financial status and the frozen amounts.

A reservation has no record until billing first touches it (its status reads `draft`); the
reservation-total collection writes `reservation_total_due` directly (spec C: "not a formal
transition") before its steps, and again on its own when it fails
(`collection.collect.left_due_on_failure`), so a collection that fails leaves the reservation due
and the manual collect route is the retry.

Every move of a financial status goes through `move` (a locked record, along `TRANSITION_MAP`);
a collection's step "from `reservation_total_due` only" is `move_due`.
"""

from __future__ import annotations

from backend import clock
from backend.billing.models import FinancialRecord, FinancialStatus
from backend.db import database
from backend.errors import Conflict
from backend.marketplace.models import Reservation
from backend.marketplace.pricing import resolve_billing_model

# The financial transition map (spec C's tree, completed by API.md "Money that always balances"):
# every move of a financial status, and its trigger. The one table: `move` refuses any other, the
# database refuses it too (migration 131's `billing_financial_transition`, the same rows, checked by
# a trigger; `tests/billing/test_financial_transitions.py` compares them), docs/billing.md shows it.
# Staying at a status is not a move. Statuses without a row out of them are terminal.
_F = FinancialStatus
TRANSITION_MAP: tuple[tuple[FinancialStatus, FinancialStatus, str], ...] = (
    (_F.DRAFT, _F.DEPOSIT_DUE, "legacy deposit collection"),
    (_F.DRAFT, _F.RESERVATION_TOTAL_DUE, "reservation total collection (direct write)"),
    (_F.DRAFT, _F.CANCELLED, "cancellation"),
    (_F.DEPOSIT_DUE, _F.DEPOSIT_PAID, "deposit paid"),
    (_F.DEPOSIT_DUE, _F.CANCELLED, "cancellation"),
    (_F.DEPOSIT_DUE, _F.RESERVATION_TOTAL_DUE, "legacy data recovery of a failed deposit collection"),
    (_F.DEPOSIT_PAID, _F.BALANCE_DUE, "legacy balance collection"),
    (_F.DEPOSIT_PAID, _F.CANCELLED, "cancellation"),
    (_F.BALANCE_DUE, _F.BALANCE_PAID, "balance paid"),
    (_F.BALANCE_DUE, _F.CANCELLED, "cancellation"),
    (_F.RESERVATION_TOTAL_DUE, _F.RESERVATION_TOTAL_PAID, "collection"),
    (_F.RESERVATION_TOTAL_DUE, _F.CANCELLED, "cancellation"),
    (_F.RESERVATION_TOTAL_PAID, _F.PARTIALLY_REFUNDED, "partial refund"),
    (_F.RESERVATION_TOTAL_PAID, _F.FULLY_REFUNDED, "refund of the whole sale"),
    (_F.RESERVATION_TOTAL_PAID, _F.CANCELLED, "credit note of the whole sale"),
    (_F.RESERVATION_TOTAL_PAID, _F.SUPPLIER_SETTLEMENT_PENDING, "self-billing"),
    (_F.RESERVATION_TOTAL_PAID, _F.WRITTEN_OFF, "write-off"),
    (_F.RESERVATION_TOTAL_PAID, _F.RESERVATION_TOTAL_DUE, "returned direct debit"),
    (_F.PARTIALLY_REFUNDED, _F.FULLY_REFUNDED, "refund of the rest of the sale"),
    (_F.PARTIALLY_REFUNDED, _F.CANCELLED, "credit note of the rest of the sale"),
    (_F.PARTIALLY_REFUNDED, _F.SUPPLIER_SETTLEMENT_PENDING, "self-billing of the store share left"),
    (_F.PARTIALLY_REFUNDED, _F.WRITTEN_OFF, "write-off"),
    (_F.SUPPLIER_SETTLEMENT_PENDING, _F.SUPPLIER_SETTLEMENT_PAID, "payout"),
    (_F.SUPPLIER_SETTLEMENT_PENDING, _F.RESERVATION_TOTAL_PAID, "self-billed invoice credited in full"),
    (_F.SUPPLIER_SETTLEMENT_PENDING, _F.PARTIALLY_REFUNDED, "self-billed invoice credited in full"),
    (_F.SUPPLIER_SETTLEMENT_PENDING, _F.FULLY_REFUNDED, "refund of the rest of a settled sale"),
    (_F.SUPPLIER_SETTLEMENT_PENDING, _F.CANCELLED, "credit note of the rest of a settled sale"),
    (_F.SUPPLIER_SETTLEMENT_PAID, _F.RESERVATION_TOTAL_PAID, "self-billed invoice credited in full"),
    (_F.SUPPLIER_SETTLEMENT_PAID, _F.PARTIALLY_REFUNDED, "self-billed invoice credited in full"),
    (_F.SUPPLIER_SETTLEMENT_PAID, _F.FULLY_REFUNDED, "refund of the rest of a settled sale"),
    (_F.SUPPLIER_SETTLEMENT_PAID, _F.CANCELLED, "credit note of the rest of a settled sale"),
)
TRANSITIONS: dict[FinancialStatus, frozenset[FinancialStatus]] = {
    status: frozenset(to for frm, to, _ in TRANSITION_MAP if frm is status) for status in FinancialStatus
}


def open_record(reservation: Reservation, status: FinancialStatus) -> None:
    """The reservation's record created at `status` with the reservation's frozen amounts when
    absent (concurrent callers create it once); an existing record is left as it is. One
    statement: atomic on its own, in the caller's transaction or outside one."""
    now = clock.now()
    database.execute_sql(OPEN, (reservation.id, resolve_billing_model(reservation.billing_model).value, status.value,
                                reservation.base_amount_cents, reservation.commission_amount_cents,
                                reservation.total_amount_cents, reservation.commission_rate_bps, now, now))


OPEN = (
    "INSERT INTO billing_financial_record (reservation_id, billing_model, financial_status, store_base_cents,"
    " commission_cents, total_cents, commission_rate_bps, created_at, updated_at)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (reservation_id) DO NOTHING"
)


def check_transition(current: FinancialStatus, status: FinancialStatus) -> None:
    if status != current and status not in TRANSITIONS[current]:
        raise ValueError(f"{current} -> {status} is not a financial status transition")


def status_of(reservation_id: str) -> str:
    """The reservation's financial status (`draft` without a record)."""
    record = FinancialRecord.get_or_none(FinancialRecord.reservation_id == reservation_id)
    return record.financial_status if record else FinancialStatus.DRAFT.value


def locked_record(reservation_id: str) -> FinancialRecord | None:
    return FinancialRecord.select().where(FinancialRecord.reservation_id == reservation_id).for_update().first()


def move(record: FinancialRecord, status: FinancialStatus) -> None:
    """Move a locked record along the transition map (or keep its status, saving its refunds); 409
    for a move the map does not have. Only the columns a move writes are saved: the runtime role
    may update no other (backend/database_roles.py)."""
    current = FinancialStatus(record.financial_status)
    if status != current and status not in TRANSITIONS[current]:
        raise Conflict(f"the financial status is {current}, it cannot become {status}",
                       reason="financial_status", financialStatus=current.value)
    record.financial_status = status
    record.updated_at = clock.now()
    record.save(only=[FinancialRecord.financial_status, FinancialRecord.refunded_excl_tax_cents,
                      FinancialRecord.updated_at])


def move_due(reservation_id: str, due: FinancialStatus, paid: FinancialStatus) -> FinancialRecord:
    """A collection's move of the reservation's record from `due` only, in one statement: the
    record updated to `paid` (and so locked) when it is `due`, and returned as it now is; 409
    `not_due` at any other status (`draft` without a record)."""
    check_transition(due, paid)
    moved = FinancialRecord.raw(MOVE_DUE, paid.value, clock.now(), reservation_id, due.value)
    record = next(iter(moved), None)
    if record is None:
        status = status_of(reservation_id)
        raise Conflict(f"the reservation is not due for collection (financial status {status})",
                       reason="not_due", financialStatus=status)
    return record


MOVE_DUE = (
    "UPDATE billing_financial_record SET financial_status = %s, updated_at = %s"
    " WHERE reservation_id = %s AND financial_status = %s RETURNING *"
)
