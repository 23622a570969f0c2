"""Advancing every order of a batch (`PATCH /api/printer/print-batches/{code}/status`).

A run record holds the request and, once done, its counters; one item per order (sorted by code)
holds the order's group (`ADVANCE_STATUS_CONCURRENCY` orders per group) and, once settled, its
outcome. One Dramatiq message works through the run: it settles the current group in one
transaction, with the run row locked, through the single-order service taken for the group's
orders together (`orders.apply_status_changes`: the same lock order, checks and writes as the
single route, a few statements for the group whatever its size), writes the items' outcomes in
one statement, then moves to the next group, unless the group had a failure, in which case the
run ends there (its counters counted from the items). Each group commits before the next one
starts, so the groups are settled one after another, and a group is settled exactly once: the
run row's lock and its `current_group` decide, so a second message for the same run (a
redelivery, the clock's resend) only continues where the run stands. Past
`MESSAGE_BUDGET_SECONDS` the message hands the rest of the run to a new message (an outbox row
written with the group it settled), so no worker thread is held for long. A running run's
counters are counted live from its items when read.

Outcomes are disjoint (spec B): `advanced` (the order changed status), `skipped` (a
VALIDATION_ERROR: another step, a cancelled order) and `failed` (anything else: NOT_FOUND, an
unexpected error). The service answers each order's refusal without touching its siblings; if
the group's transaction fails unexpectedly, it is rolled back and the group is settled again in
a new one, its orders one by one through the single-order service, each in a savepoint, so one
broken order is `failed` (INTERNAL_ERROR) and its siblings still advance.

A run never stays `running` for good: the worker retries a message that failed for a transient
reason (the database unreachable: `ServiceUnavailable` is retried, not thrown), and the clock
(`resume_stalled_runs`) sends the run again when it has not moved for `STALL_SECONDS`. A batch
has at most one running run (a partial unique index): a second request answers that run. The
run's state names, for each skipped or failed order, its code, error code and reason.
"""
from __future__ import annotations

import math
import select
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from peewee import fn

from backend import clock, outbox
from backend.db import database, transaction
from backend.errors import DomainError, NotFound, ValidationError
from backend.logs import get_logger
from backend.printing import orders
from backend.printing.batch_state import SENT
from backend.printing.models import PrintBatchStatusRun as StatusRun
from backend.printing.models import PrintBatchStatusRunItem as StatusRunItem
from backend.printing.models import PrintOrder, PrintOrderBatch
from backend.printing.status import parse_status

log = get_logger("printing.batch_advance")
ADVANCE_ACTOR = "advance_batch_run"

STALL_SECONDS = 120  # a running run that has not moved for this long is sent again
MESSAGE_BUDGET_SECONDS = 10.0  # past this, a message hands the rest of its run to a new one


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


# The items of a run, one per order of the batch sorted by code, numbered into groups, in one statement.
INSERT_ITEMS = (
    "INSERT INTO print_batch_status_run_item (run_id, order_id, group_index)"
    " SELECT %(run)s, id, (row_number() OVER (ORDER BY code) - 1) / %(size)s FROM print_order"
    " WHERE batch_id = %(batch)s"
)


def start_advance(*, batch_code: str, printer_organization_id: str, next_status: str, actor_user_id: str | None,
                  group_size: int) -> RunState:
    """Record the run and its items, and hand the run to the workers; while the batch has a
    running run, that run (no second one)."""
    target = parse_status(next_status)
    with transaction():
        batch = printer_sent_batch(batch_code, printer_organization_id)
        # the batch row serializes two requests; the partial unique index backs it
        list(PrintOrderBatch.select(PrintOrderBatch.id).where(PrintOrderBatch.id == batch.id).for_update())
        running = StatusRun.get_or_none(StatusRun.batch_id == batch.id, StatusRun.status == "running")
        if running is not None:
            return _state(running)
        count = PrintOrder.select().where(PrintOrder.batch_id == batch.id).count()
        moment = clock.now()
        run = StatusRun.create(batch_id=batch.id, next_status=target.value, actor_user_id=actor_user_id,
                               group_size=group_size, groups_total=math.ceil(count / group_size),
                               created_at=moment, progressed_at=moment)
        database.execute_sql(INSERT_ITEMS, {"run": run.id, "size": group_size, "batch": batch.id})
        if count:
            outbox.enqueue(ADVANCE_ACTOR, run.id)
        else:
            _finish(run)
            run.save()
    return _state(run)


def resume_stalled_runs(*, older_than_seconds: int = STALL_SECONDS, limit: int = 100) -> int:
    """The clock's repair: each running run that has not moved for `older_than_seconds` (its
    message lost, or its worker killed) is sent again. Returns the runs resumed."""
    stalled = (StatusRun.status == "running") & (StatusRun.progressed_at < clock.now() - timedelta(
        seconds=older_than_seconds))
    resumed = 0
    for (run_id,) in (StatusRun.select(StatusRun.id).where(stalled)
                      .order_by(StatusRun.progressed_at).limit(limit).tuples()):
        with transaction():
            run = (StatusRun.select().where(StatusRun.id == run_id, stalled)
                   .for_update(skip_locked=True).first())
            if run is None:  # moved meanwhile, or a message or another clock has it
                continue
            outbox.enqueue(ADVANCE_ACTOR, run.id)
            run.progressed_at = clock.now()
            run.save()
            resumed += 1
            log.warning("stalled batch advance resumed", extra={"fields": {
                "runId": run.id, "group": run.current_group}})
    return resumed


def _finish(run: StatusRun) -> None:
    run.status, run.finished_at = "done", clock.now()


def advance_run(run_id: str, *, budget_seconds: float = MESSAGE_BUDGET_SECONDS) -> int:
    """Settle the run's groups one after another, each in its own transaction, from wherever the
    run stands, until it is done; past `budget_seconds`, hand the rest to a new message. Returns
    the groups this call settled (0 for a run already done, or unknown)."""
    deadline = time.monotonic() + budget_seconds
    settled = 0
    printer = (PrintOrderBatch.select(PrintOrderBatch.printer_organization_id)
               .join(StatusRun, on=StatusRun.batch_id == PrintOrderBatch.id).where(StatusRun.id == run_id).scalar())
    while True:
        try:
            step = _step(run_id, printer, deadline, together=True)
        except Exception as exc:  # rolled back: the group again, order by order, so the broken order fails alone
            log.warning("batch group written order by order", extra={"fields": {
                "runId": run_id, "error": type(exc).__name__}})
            step = _step(run_id, printer, deadline, together=False)
        if step is None:
            return settled
        settled += 1
        if step != "running":
            return settled


def _step(run_id: str, printer_organization_id: str, deadline: float, *, together: bool) -> str | None:
    """Settle the run's current group in one transaction (the run row locked): the run's status
    after it ("handed over" when past `deadline` it queued the next message), or None when the
    run was not running."""
    with transaction():
        cursor = database.execute_sql(f"{LOCK_RUN}; {RUN_GROUP}", {"run": run_id})
        rows = cursor.fetchall()
        if not rows:
            return None
        width = len(cursor.description) - 3  # the run row's columns, then the item's three
        names = [column[0] for column in cursor.description[:width]]
        run = StatusRun(**dict(zip(names, rows[0][:width], strict=True)))
        if run.status != "running":
            return None
        writes: list[tuple[str, dict]] = []
        items = [row[width:] for row in rows if row[width] is not None]
        _settle_group(run, items, printer_organization_id, writes, together=together)
        step = run.status
        if run.status == "running" and time.monotonic() >= deadline:
            outbox.enqueue(ADVANCE_ACTOR, run.id)  # with this group's commit: the run goes on
            step = "handed over"
        saved = {"id": run.id, "status": run.status, "group": run.current_group, "progressed": run.progressed_at,
                 "finished": run.finished_at, "advanced": run.advanced, "skipped": run.skipped, "failed": run.failed}
        writes += [(SAVE_RUN, saved), (NOTIFY_DONE if run.status == "done" else ASYNC_COMMIT, {"channel": RUN_DONE})]
        values: dict = {}
        for _, part in writes:
            if values.keys() & part.keys():  # one round trip, one namespace of values
                raise ValueError(f"statements sent together name a value twice: {values.keys() & part.keys()}")
            values.update(part)
        database.execute_sql("; ".join(sql for sql, _ in writes), values)
    return step


# A group is a few round trips whatever its size. (1) The run row locked, then read again with its
# current group's items (their order's code, and their outcome: settled by a message of the former
# per-order advance), in the group's order, by a second statement whose snapshot is taken once the
# lock is held (it reads what the lock's previous holder committed). (2) The orders' locks
# (`orders.lock_orders`). (3) The orders' writes, the items' outcomes and the run row, sent
# together; then the transaction's COMMIT. The run row is read and written as text, one statement
# each, rather than built as peewee queries for every group.
LOCK_RUN = "SELECT id FROM print_batch_status_run WHERE id = %(run)s FOR UPDATE"
RUN_GROUP = (
    "SELECT r.*, i.id, o.code, i.outcome FROM print_batch_status_run r"
    " LEFT JOIN print_batch_status_run_item i ON i.run_id = r.id AND i.group_index = r.current_group"
    " LEFT JOIN print_order o ON o.id = i.order_id WHERE r.id = %(run)s ORDER BY i.id"
)
SAVE_RUN = (
    "UPDATE print_batch_status_run SET status = %(status)s, current_group = %(group)s,"
    " progressed_at = %(progressed)s, finished_at = %(finished)s, advanced = %(advanced)s, skipped = %(skipped)s,"
    " failed = %(failed)s WHERE id = %(id)s"
)
# A group before the last commits without waiting for its WAL to reach the disk: the last group's
# commit (synchronous) flushes every earlier one with it, so a run that answers `done` is durable;
# a crash in between loses whole groups only (each is one transaction: its orders, their outcomes
# and the run's `current_group` together), which the resumed run settles again. Waiting for each
# flush would make a long run's time that of the disk, not of its work.
ASYNC_COMMIT = "SET LOCAL synchronous_commit TO OFF"
# A run's last group tells the requests waiting for it (`wait_for_run`), with its commit.
RUN_DONE = "print_batch_run_done"
NOTIFY_DONE = "SELECT pg_notify(%(channel)s, %(id)s)"


SETTLE_ITEMS = (
    "UPDATE print_batch_status_run_item AS i SET outcome = v.outcome, error_code = v.error_code,"
    " error_message = v.error_message, settled_at = %(settled_at)s"
    " FROM unnest(%(item_ids)s::bigint[], %(outcomes)s::varchar[], %(error_codes)s::varchar[],"
    " %(error_messages)s::text[]) AS v (id, outcome, error_code, error_message) WHERE i.id = v.id"
)


def _settle_group(run: StatusRun, items: list[tuple], printer_organization_id: str,
                  writes: list[tuple[str, dict]], *, together: bool) -> None:
    """Advance the current group's orders, then move the run to the next group or to its end (with
    the counters: the items settled before, counted, and this group's outcomes). The caller holds
    the run row's lock and gives the group's `items` (id, order code, outcome), and sends `writes`
    (the orders' writes when together, then the items' outcomes) with the run row, before the
    COMMIT."""
    pending = [(item_id, code) for item_id, code, outcome in items if outcome is None]
    codes = [code for _, code in pending]
    if together:
        outcomes = _advance_together(run, printer_organization_id, codes, writes)
    else:
        outcomes = {code: _advance_one(run, printer_organization_id, code) for code in codes}
    if pending:
        written = [outcomes[code] for _, code in pending]
        writes.append((SETTLE_ITEMS, {"settled_at": clock.now(), "item_ids": [item_id for item_id, _ in pending],
                                      "outcomes": [outcome for outcome, _, _ in written],
                                      "error_codes": [error_code for _, error_code, _ in written],
                                      "error_messages": [reason for _, _, reason in written]}))
    run.progressed_at = clock.now()
    group = [outcome for _, _, outcome in items if outcome] + [outcome for outcome, _, _ in outcomes.values()]
    if "failed" in group or run.current_group + 1 >= run.groups_total:
        before = _counters(run.id)  # this group's pending items are not written yet
        now = [outcome for outcome, _, _ in outcomes.values()]
        run.advanced, run.skipped, run.failed = (count + now.count(outcome) for count, outcome in
                                                 zip(before, ("advanced", "skipped", "failed"), strict=True))
        _finish(run)
    else:
        run.current_group += 1


Outcome = tuple[str, str | None, str | None]  # (outcome, error code, reason)


def _advance_together(run: StatusRun, printer_organization_id: str, codes: list[str],
                      deferred: list[tuple[str, dict]]) -> dict[str, Outcome]:
    """The group's orders through the service together, in the group's transaction; their writes
    appended to `deferred`, sent with the group's other writes."""
    if not codes:
        return {}
    answers = orders.apply_status_changes(order_codes=codes, printer_organization_id=printer_organization_id,
                                          next_status=run.next_status, actor_user_id=run.actor_user_id,
                                          deferred=deferred)
    return {code: _outcome(answer) for code, answer in answers.items()}


def _outcome(answer: PrintOrder | DomainError) -> Outcome:
    if isinstance(answer, ValidationError):
        return "skipped", answer.code, answer.message
    if isinstance(answer, DomainError):
        return "failed", answer.code, answer.message
    return "advanced", None, None


def _advance_one(run: StatusRun, printer_organization_id: str, code: str) -> Outcome:
    """One order through the single-order service, in a savepoint (its nested transaction()):
    its outcome; a raw exception is a real anomaly: counted, never propagated (spec B)."""
    try:
        orders.change_status(order_code=code, printer_organization_id=printer_organization_id,
                             next_status=run.next_status, actor_user_id=run.actor_user_id)
    except DomainError as exc:
        return _outcome(exc)
    except Exception as exc:
        log.exception("batch order not advanced", extra={"fields": {"runId": run.id, "orderCode": code}})
        return "failed", "INTERNAL_ERROR", type(exc).__name__
    return "advanced", None, None


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
    """The run's state once done, or as it stands when `timeout_seconds` have passed. The request's
    connection listens on `RUN_DONE`, which the run's last group notifies with its commit: the
    status (one indexed read) is read again as soon as a notification comes, and otherwise at a
    short interval doubling up to a bound, so the answer follows the run's end closely even when
    a notification is missed."""
    deadline, pause = time.monotonic() + timeout_seconds, 0.02
    status = StatusRun.select(StatusRun.status).where(StatusRun.id == run_id)
    connection = database.connection()
    database.execute_sql(f"LISTEN {RUN_DONE}")  # before the first read: a run ending after it notifies
    try:
        while status.scalar() != "done" and (left := deadline - time.monotonic()) > 0:
            if not connection.notifies:
                select.select([connection], [], [], min(pause, left))
                connection.poll()
            connection.notifies.clear()
            pause = min(pause * 2, 0.1)
    finally:
        database.execute_sql(f"UNLISTEN {RUN_DONE}")
        connection.notifies.clear()
    return _state(StatusRun.get_by_id(run_id))
