"""The self-billing scheduler (spec C "Self-billing scheduler"; API.md "Intervals in milliseconds").

A periodiq job runs every minute (`actors/billing/self_billing.py`); when `SELF_BILLING_SCHEDULER_ENABLED`, it
starts a pass only once `SELF_BILLING_SCHEDULER_INTERVAL_MS` (less `SCHEDULE_SLACK`, the minute
job's jitter) has elapsed since the start of the last pass recorded in
`billing_self_billing_pass`. At most one pass runs at a time, across clocks and workers: the
decision is taken under a transaction-level advisory lock and a unique partial index admits one
`running` row; a pass left `running` longer than `ABANDONED_AFTER` (its worker died) is closed as
`abandoned` by the next decision.

A pass selects the `principal_seller` reservations in `reservation_total_paid` with no
`supplier_self_billed` invoice whose service has ended (`eligible`), and hands each to
`self_billing.self_bill_if_due`, its own transaction: not yet 3 French business days after
`endsAt` (`skippedNotDue`), an open incident (`skippedOpenIncident`), no signed mandate
(`skippedNoMandate`), else `issued`. A unit that raises is `failed` (logged
`billing.supplier.self_billing.trigger_failed`), rolled back alone, and the pass goes on. One that
another pass or a catch-up self-billed meanwhile is `alreadySelfBilled`; a partly refunded sale
with nothing left of its store share is `skippedNothingToSettle` (never a failure at every pass).
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

from peewee import BigAutoField, CharField, IntegerField, fn
from playhouse.postgres_ext import DateTimeTZField

from backend import clock
from backend.billing.models import FinancialRecord, Invoice, InvoiceKind, InvoiceStatus
from backend.billing.self_billing.invoice import SCOPE, SETTLEABLE, Outcome, self_bill_if_due
from backend.config import Config
from backend.db import database, transaction
from backend.logs import log_event
from backend.marketplace.models import Reservation
from backend.marketplace.pricing import BillingModel
from backend.model import BaseModel

ABANDONED_AFTER = timedelta(minutes=30)
SCHEDULE_SLACK = timedelta(seconds=5)
_LOCK_KEY = 0x53424C4C  # "SBLL"
COUNTERS = ("eligible", "issued", "skippedNoMandate", "skippedOpenIncident", "skippedNotDue", "failed")
_COUNTER_OF = {
    Outcome.ISSUED: "issued",
    Outcome.NO_MANDATE: "skippedNoMandate",
    Outcome.OPEN_INCIDENT: "skippedOpenIncident",
    Outcome.NOT_DUE: "skippedNotDue",
    Outcome.ALREADY: "alreadySelfBilled",
    Outcome.NOTHING_TO_SETTLE: "skippedNothingToSettle",
}
# Logged with the pass's counters, not columns of its row.
EXTRA_COUNTERS = ("alreadySelfBilled", "skippedNothingToSettle")


class SelfBillingPass(BaseModel):
    """One scheduler pass and its counters (migration 074); at most one is `running`."""

    id = BigAutoField()
    started_at = DateTimeTZField()
    finished_at = DateTimeTZField(null=True)
    outcome = CharField(max_length=20, default="running")
    eligible = IntegerField(default=0)
    issued = IntegerField(default=0)
    skipped_no_mandate = IntegerField(default=0)
    skipped_open_incident = IntegerField(default=0)
    skipped_not_due = IntegerField(default=0)
    failed = IntegerField(default=0)

    class Meta:
        table_name = "billing_self_billing_pass"


def start_pass_if_due(interval_ms: int) -> SelfBillingPass | None:
    """A new running pass when the interval has elapsed since the last one started and none is
    running; else None."""
    now = clock.now()
    with transaction():
        database.execute_sql("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        (SelfBillingPass.update(outcome="abandoned", finished_at=now)
         .where(SelfBillingPass.outcome == "running", SelfBillingPass.started_at < now - ABANDONED_AFTER).execute())
        last = SelfBillingPass.select().order_by(SelfBillingPass.started_at.desc()).first()
        if last is not None and (last.outcome == "running"
                                 or now - last.started_at < timedelta(milliseconds=interval_ms) - SCHEDULE_SLACK):
            return None
        return SelfBillingPass.create(started_at=now)


def candidates() -> list[str]:
    """Spec C's selection, less the window (checked per unit), as settlement follows the sale:
    ended `principal_seller` reservations in `reservation_total_paid` or `partially_refunded` with
    no live `supplier_self_billed` invoice (one credited in full does not count)."""
    return [row.id for row in candidates_query()]


def candidates_query():
    """The query of `candidates`, served by indexes whatever the history (migration 157)."""
    self_billed = Invoice.select(Invoice.reservation_id).where(Invoice.kind == InvoiceKind.SUPPLIER_SELF_BILLED,
                                                                Invoice.status != InvoiceStatus.CREDITED,
                                                                Invoice.reservation_id == Reservation.id)
    return (Reservation.select(Reservation.id)
            .join(FinancialRecord, on=FinancialRecord.reservation_id == Reservation.id)
            .where(FinancialRecord.financial_status.in_(sorted(SETTLEABLE)),
                   FinancialRecord.billing_model == BillingModel.PRINCIPAL_SELLER.value,
                   Reservation.ends_at <= clock.now(), ~fn.EXISTS(self_billed))
            .order_by(Reservation.ends_at, Reservation.id))


def self_bill_due_reservations(*, config: Config) -> dict[str, int]:
    """One pass's work: every candidate through its unit; the counters (never raises for a unit)."""
    ids = candidates()
    counters: Counter[str] = Counter(eligible=len(ids))
    for reservation_id in ids:
        try:
            result = self_bill_if_due(reservation_id, config=config)
        except Exception as exc:  # one reservation's error never stops the pass
            counters["failed"] += 1
            log_event(f"{SCOPE}.trigger_failed", "self-billing of a reservation failed", "error",
                      reservationId=reservation_id, error=f"{type(exc).__name__}: {exc}"[:500])
            continue
        counters[_COUNTER_OF[result.outcome]] += 1
    return {name: counters[name] for name in (*COUNTERS, *EXTRA_COUNTERS)}


def run_if_due(*, interval_ms: int, config: Config) -> dict[str, int] | None:
    """The periodic job's body: a pass when one is due (its counters logged and recorded), else None."""
    scheduler_pass = start_pass_if_due(interval_ms)
    if scheduler_pass is None:
        return None
    try:
        counters = self_bill_due_reservations(config=config)
    except BaseException:
        with transaction():
            SelfBillingPass.update(outcome="abandoned", finished_at=clock.now()).where(
                SelfBillingPass.id == scheduler_pass.id, SelfBillingPass.outcome == "running").execute()
        raise
    with transaction():
        SelfBillingPass.update(
            outcome="completed", finished_at=clock.now(), eligible=counters["eligible"], issued=counters["issued"],
            skipped_no_mandate=counters["skippedNoMandate"], skipped_open_incident=counters["skippedOpenIncident"],
            skipped_not_due=counters["skippedNotDue"], failed=counters["failed"],
        ).where(SelfBillingPass.id == scheduler_pass.id).execute()
    log_event("billing.supplier.self_billing.pass", "self-billing pass finished", "info", passId=scheduler_pass.id,
              **counters)
    return counters
