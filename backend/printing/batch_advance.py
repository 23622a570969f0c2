"""Advancing every order of a batch (`PATCH /api/printer/print-batches/{code}/status`).

A run record holds the request and its counters; one item per order (sorted by code) holds the
order's group (`ADVANCE_STATUS_CONCURRENCY` orders per group, default 10) and, once settled, its
outcome. The orders of a group are Dramatiq messages processed in parallel, each through the
single-order service (`orders.change_status`); the message that settles a group's last order
starts the next group, unless the group had a failure, in which case the run ends there.

Outcomes are disjoint (spec B): `advanced` (the order changed status), `skipped` (a
VALIDATION_ERROR: another step, a cancelled order) and `failed` (anything else: NOT_FOUND, an
unexpected error). Each message changes its order and settles its item in one transaction, with
the item row locked: a redelivered message finds the item settled and does nothing, so no order is
ever advanced twice. The run row is not touched by the orders (it serialized a group's commits):
once its transaction is committed, a message that finds no unsettled item in its group locks the
run row and, if the group is still the current one, settles it: the counters counted from the
items (exactly what was written; a running run's state counts them live), then the next group or
the end. The group's last message to commit always finds its group complete, so a group is settled
exactly once, and a redelivered message settles a group its first copy left unsettled.

A run never stays `running` for good: the worker retries a message that failed for a transient
reason (the database unreachable: `ServiceUnavailable` is retried, not thrown), and the clock
(`resume_stalled_runs`, every minute) sends again the unsettled items of a run whose current group
has not moved (no order settled, no group started) for `STALL_SECONDS`; the item lock makes a
second message for an item harmless. A batch has at most one running run (a partial unique index):
a second request answers that run. The run's state names, for each skipped or failed order, its
code, error code and reason.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from peewee import fn

from backend import clock, outbox
from backend.db import transaction
from backend.errors import DomainError, NotFound, ValidationError
from backend.logs import get_logger
from backend.printing import orders
from backend.printing.batches import SENT
from backend.printing.models import PrintBatchStatusRun as StatusRun
from backend.printing.models import PrintBatchStatusRunItem as StatusRunItem
from backend.printing.models import PrintOrder, PrintOrderBatch
from backend.printing.status import parse_status

log = get_logger("printing.batch_advance")
ADVANCE_ACTOR = "advance_batch_order"


STALL_SECONDS = 120  # a current group with no settled order for this long is sent again


@dataclass(frozen=True)
class UnadvancedOrder:
    """An order a run skipped or failed, and why."""

    code: str
    error_code: str | None
    reason: str | None


@dataclass(frozen=True)
class RunState:
    id: str
    status: str
    advanced: int
    skipped: int
    failed: int
    groups_total: int
    current_group: int
    created_at: datetime
    finished_at: datetime | None
    skipped_orders: tuple[UnadvancedOrder, ...] = ()
    failed_orders: tuple[UnadvancedOrder, ...] = ()

    @property
    def done(self) -> bool:
        return self.status == "done"


def _state(run: StatusRun) -> RunState:
    unadvanced: dict[str, list[UnadvancedOrder]] = {"skipped": [], "failed": []}
    if run.status == "running" or run.skipped or run.failed:
        rows = (StatusRunItem.select(StatusRunItem.outcome, PrintOrder.code, StatusRunItem.error_code,
                                     StatusRunItem.error_message)
                .join(PrintOrder, on=(StatusRunItem.order_id == PrintOrder.id))
                .where(StatusRunItem.run_id == run.id, StatusRunItem.outcome.in_(["skipped", "failed"]))
                .order_by(PrintOrder.code).tuples())
        for outcome, code, error_code, reason in rows:
            unadvanced[outcome].append(UnadvancedOrder(code, error_code, reason))
    advanced, skipped, failed = _counters(run.id) if run.status == "running" else (run.advanced, run.skipped,
                                                                                     run.failed)
    return RunState(run.id, run.status, advanced, skipped, failed, run.groups_total,
                    run.current_group, run.created_at, run.finished_at, tuple(unadvanced["skipped"]),
                    tuple(unadvanced["failed"]))


def printer_sent_batch(batch_code: str, printer_organization_id: str) -> PrintOrderBatch:
    """The printer's sent batch of that code, in one query (404 otherwise)."""
    batch = PrintOrderBatch.get_or_none(PrintOrderBatch.code == batch_code, PrintOrderBatch.status == SENT,
                                        PrintOrderBatch.printer_organization_id == printer_organization_id)
    if batch is None:
        raise NotFound("print batch not found")
    return batch


def start_advance(*, batch_code: str, printer_organization_id: str, next_status: str, actor_user_id: str | None,
                  group_size: int) -> RunState:
    """Record the run and its items, and hand the first group to the workers; while the batch has
    a running run, that run (no second one)."""
    target = parse_status(next_status)
    with transaction():
        batch = printer_sent_batch(batch_code, printer_organization_id)
        # the batch row serializes two requests; the partial unique index backs it
        list(PrintOrderBatch.select(PrintOrderBatch.id).where(PrintOrderBatch.id == batch.id).for_update())
        running = StatusRun.get_or_none(StatusRun.batch_id == batch.id, StatusRun.status == "running")
        if running is not None:
            return _state(running)
        order_ids = [o.id for o in PrintOrder.select(PrintOrder.id).where(PrintOrder.batch_id == batch.id)
                     .order_by(PrintOrder.code)]
        moment = clock.now()
        run = StatusRun.create(batch_id=batch.id, next_status=target.value, actor_user_id=actor_user_id,
                               group_size=group_size, groups_total=math.ceil(len(order_ids) / group_size),
                               created_at=moment, progressed_at=moment)
        StatusRunItem.insert_many([{"run_id": run.id, "order_id": order_id, "group_index": n // group_size}
                                   for n, order_id in enumerate(order_ids)]).execute()
        if order_ids:
            _send_group(run, 0)
        else:
            _finish(run)
    return _state(run)


def _send_group(run: StatusRun, group: int, *, unsettled_only: bool = False) -> int:
    items = StatusRunItem.select(StatusRunItem.order_id).where(StatusRunItem.run_id == run.id,
                                                               StatusRunItem.group_index == group)
    if unsettled_only:
        items = items.where(StatusRunItem.outcome.is_null())
    sent = 0
    for (order_id,) in items.order_by(StatusRunItem.id).tuples():
        outbox.enqueue(ADVANCE_ACTOR, run.id, order_id)
        sent += 1
    return sent


def resume_stalled_runs(*, older_than_seconds: int = STALL_SECONDS, limit: int = 100) -> int:
    """The clock's repair: each running run whose current group has not moved for
    `older_than_seconds` gets its unsettled items sent again. Returns the runs resumed."""
    cutoff = clock.now() - timedelta(seconds=older_than_seconds)
    # Quiet: no group started and no order settled since the cutoff (a settled order marks its
    # item, not the run row, which the group's orders would otherwise queue on).
    settled_since = StatusRunItem.select().where(StatusRunItem.run_id == StatusRun.id,
                                                 StatusRunItem.settled_at >= cutoff)
    stalled = (StatusRun.status == "running") & (StatusRun.progressed_at < cutoff) & ~fn.EXISTS(settled_since)
    resumed = 0
    for (run_id,) in (StatusRun.select(StatusRun.id).where(stalled)
                      .order_by(StatusRun.progressed_at).limit(limit).tuples()):
        with transaction():
            run = (StatusRun.select().where(StatusRun.id == run_id, stalled)
                   .for_update(skip_locked=True).first())
            if run is None:  # moved meanwhile, or another clock has it
                continue
            sent = _send_group(run, run.current_group, unsettled_only=True)
            if not sent:  # every item settled but the run did not move on: settle it now
                _settle_group(run)
            run.progressed_at = clock.now()
            run.save()
            resumed += 1
            log.warning("stalled batch advance resumed", extra={"fields": {
                "runId": run.id, "group": run.current_group, "resent": sent}})
    return resumed


def _finish(run: StatusRun) -> None:
    run.status, run.finished_at = "done", clock.now()


def advance_batch_order(run_id: str, order_id: str) -> bool:
    """Advance one order of a run and settle it; False when it was settled already. Then, if that
    completed the current group, settle the group (next group, or the end)."""
    with transaction():
        # The item (locked), with what advancing its order needs of the run, the batch and the order.
        item = (StatusRunItem
                .select(StatusRunItem, StatusRun.next_status, StatusRun.actor_user_id,
                        PrintOrderBatch.printer_organization_id, PrintOrder.code.alias("order_code"))
                .join(StatusRun, on=StatusRunItem.run_id == StatusRun.id)
                .join(PrintOrderBatch, on=StatusRun.batch_id == PrintOrderBatch.id)
                .switch(StatusRunItem).join(PrintOrder, on=StatusRunItem.order_id == PrintOrder.id)
                .where(StatusRunItem.run_id == run_id, StatusRunItem.order_id == order_id)
                .for_update(of=StatusRunItem).objects().first())
        if item is None:
            return False
        advanced = item.outcome is None
        if advanced:
            item.outcome, item.error_code, item.error_message = _advance_one(item)
            item.settled_at = clock.now()
            item.save(only=[StatusRunItem.outcome, StatusRunItem.error_code, StatusRunItem.error_message,
                            StatusRunItem.settled_at])
    # Committed: the group's last message to commit sees every item of the group settled, whichever
    # order they commit in, so the group is settled (by one of them: the run row decides).
    if not _unsettled(run_id, item.group_index):
        with transaction():
            run = StatusRun.select().where(StatusRun.id == run_id).for_update().get()
            if run.status == "running" and run.current_group == item.group_index:
                _settle_group(run)
                run.save()
    return advanced


def _unsettled(run_id: str, group: int) -> int:
    return (StatusRunItem.select().where(StatusRunItem.run_id == run_id, StatusRunItem.group_index == group,
                                         StatusRunItem.outcome.is_null()).count())


def _advance_one(item) -> tuple[str, str | None, str | None]:
    """Advance the order of `item` (read with its run's and batch's columns): its outcome."""
    try:
        with transaction():  # a savepoint: a refused or broken step leaves the item's transaction usable
            orders.change_status(order_code=item.order_code, printer_organization_id=item.printer_organization_id,
                                 next_status=item.next_status, actor_user_id=item.actor_user_id)
    except ValidationError as exc:
        return "skipped", exc.code, exc.message
    except DomainError as exc:
        return "failed", exc.code, exc.message
    except Exception as exc:  # a raw exception is a real anomaly: counted, never propagated (spec B)
        log.exception("batch order not advanced", extra={"fields": {"runId": item.run_id, "orderId": item.order_id}})
        return "failed", "INTERNAL_ERROR", type(exc).__name__
    return "advanced", None, None


def _settle_group(run: StatusRun) -> None:
    """When the current group has no order left to settle: the counters, then the next group or the
    end. The caller holds the run row's lock."""
    group = (StatusRunItem.select(StatusRunItem.outcome)
             .where(StatusRunItem.run_id == run.id, StatusRunItem.group_index == run.current_group).tuples())
    outcomes = [outcome for (outcome,) in group]
    if None in outcomes:
        return
    run.advanced, run.skipped, run.failed = _counters(run.id)
    run.progressed_at = clock.now()
    if "failed" in outcomes or run.current_group + 1 >= run.groups_total:
        _finish(run)
        return
    run.current_group += 1
    _send_group(run, run.current_group)


def _counters(run_id: str) -> tuple[int, int, int]:
    """(advanced, skipped, failed): the settled items of the run, as written."""
    counts = dict(StatusRunItem.select(StatusRunItem.outcome, fn.COUNT(StatusRunItem.id))
                  .where(StatusRunItem.run_id == run_id, StatusRunItem.outcome.is_null(False))
                  .group_by(StatusRunItem.outcome).tuples())
    return counts.get("advanced", 0), counts.get("skipped", 0), counts.get("failed", 0)


def run_state(*, batch_code: str, printer_organization_id: str, run_id: str) -> RunState:
    batch = printer_sent_batch(batch_code, printer_organization_id)
    run = StatusRun.get_or_none(StatusRun.id == run_id, StatusRun.batch_id == batch.id)
    if run is None:
        raise NotFound("status run not found")
    return _state(run)


def wait_for_run(run_id: str, *, timeout_seconds: float) -> RunState:
    """The run's state once done, or as it stands when `timeout_seconds` have passed."""
    deadline, pause = time.monotonic() + timeout_seconds, 0.02
    while True:
        state = _state(StatusRun.get_by_id(run_id))
        if state.done or time.monotonic() >= deadline:
            return state
        time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
        pause = min(pause * 2, 0.5)
