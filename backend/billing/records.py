"""The reservation financial record: billing model, financial status and the frozen amounts.

A reservation has no record until billing first touches it (its status reads `draft`); the
reservation-total collection writes `reservation_total_due` directly (spec C: "not a formal
transition") in its first read, and again on its own when it fails
(`collection.left_due_on_failure`), so a collection that fails leaves the reservation due and
the manual collect route is the retry.
"""

from __future__ import annotations

from backend import clock
from backend.billing.models import FinancialRecord, FinancialStatus
from backend.db import database, transaction
from backend.errors import Conflict
from backend.marketplace.models import Reservation
from backend.marketplace.pricing import BillingModel, resolve_billing_model

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


# `open_record` in one statement: an INSERT ... SELECT from the reservation, conditions included.
OPEN_COLLECTABLE = (
    "INSERT INTO billing_financial_record (reservation_id, billing_model, financial_status, store_base_cents,"
    " commission_cents, total_cents, commission_rate_bps)"
    " SELECT id, %(model)s, %(status)s, base_amount_cents, commission_amount_cents, total_amount_cents,"
    " commission_rate_bps FROM reservation WHERE id = %(id)s AND industrial_organization_id = %(org)s"
    " AND status = ANY(%(collectable)s::text[]) AND coalesce(billing_model = 'principal_seller', false) = %(principal)s"
    " ON CONFLICT (reservation_id) DO NOTHING"
)


def open_collectable_params(reservation_id: str, industrial_organization_id: str, model: BillingModel,
                            status: FinancialStatus, collectable: frozenset[str]) -> dict:
    """The parameters of `OPEN_COLLECTABLE` (`id` and `org` name the reservation and its organization)."""
    return {"model": model.value, "status": status.value, "id": reservation_id, "org": industrial_organization_id,
            "collectable": sorted(collectable), "principal": model is BillingModel.PRINCIPAL_SELLER}


def open_collectable(reservation_id: str, industrial_organization_id: str, model: BillingModel,
                     status: FinancialStatus, collectable: frozenset[str]) -> None:
    """`open_record` in one statement, for the organization's reservation only when its status is
    in `collectable` and it is billed under `model` (else nothing: the caller's checks say why).
    The collection sends the same statement as part of its read (`OPEN_COLLECTABLE`)."""
    database.execute_sql(OPEN_COLLECTABLE, open_collectable_params(
        reservation_id, industrial_organization_id, model, status, collectable))


# Parameters: status, now, reservation id, current status. Moves the record (and locks it) when it
# is at `current`; returns its frozen amounts.
SETTLE = ("UPDATE billing_financial_record SET financial_status = %(status)s, updated_at = %(now)s"
          " WHERE reservation_id = %(id)s AND financial_status = %(current)s"
          " RETURNING store_base_cents, commission_cents, total_cents")


def check_transition(current: FinancialStatus, status: FinancialStatus) -> None:
    if status not in TRANSITIONS[current]:
        raise ValueError(f"{current} -> {status} is not a financial status transition")


def status_of(reservation_id: str) -> str:
    """The reservation's financial status (`draft` without a record)."""
    record = FinancialRecord.get_or_none(FinancialRecord.reservation_id == reservation_id)
    return record.financial_status if record else FinancialStatus.DRAFT.value


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
