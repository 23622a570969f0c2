"""The outbox: follow-up work recorded in the same transaction as the change that causes it, and
closed only when its actor has done the work.

The life of a row:

1. `enqueue("actor_name", *args)` inserts it at once, inside the caller's `transaction()` (one
   `INSERT ... RETURNING id`); a rolled-back transaction or savepoint takes it away.
2. After the commit of the transaction that created it, the row goes to this process's
   hand-over thread (`Handoff`), which gives each row to the broker (`broker.enqueue`, Dramatiq's
   public API) and marks the rows it took `sent_at`, the rows it refused with their error. The
   request thread never talks to Redis: a Redis stall delays the hand-over, never an answer.
3. The worker's `OutboxCompletion` middleware (`actors/broker.py`) closes the row (`done_at`, a
   short transaction of its own) once its actor returned, or raised an exception it declares in
   `throws` (a refusal is an answer), before Dramatiq acknowledges the message: a worker that
   dies in between leaves the message to Redis, which hands it to another worker. It marks the
   row `dead_at` when Dramatiq gives the message up (retries exhausted), and pushes its
   `redeliver_at` past a retry Dramatiq will make.
4. `sweep()`, every minute on the clock, re-sends (a) rows never handed over after
   `OUTBOX_RESEND_AFTER_SECONDS` (a crash or a Redis outage between commit and hand-over) and
   (b) rows handed over but not done once their `redeliver_at` passed: Redis lost the message
   (restart without persistence, FLUSHALL, eviction). Each hand-over doubles the wait
   (`OUTBOX_REDELIVER_AFTER_SECONDS` x 2^n, capped); a row still not done after
   `OUTBOX_MAX_HANDOVERS` hand-overs is marked dead, which `vitrine queues` and `/api/metrics`
   show. A Redis that lost its data is found sooner by its epoch marker
   (`backend.broker_epoch`), which hands every row handed over but not done over again at once
   (`hand_over_again`). Actors are idempotent, so a re-sent message whose first copy ran after
   all is harmless: work is done at least once end to end, never lost.
"""

from __future__ import annotations

import atexit
import json
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta

from peewee import BigAutoField, CharField, IntegerField, TextField
from playhouse.postgres_ext import BinaryJSONField, DateTimeTZField

from backend import clock
from backend.context import current_request_id
from backend.db import close_connection, database, in_transaction, on_commit, open_connection, transaction
from backend.logs import get_logger
from backend.model import BaseModel, created_at_field

log = get_logger("outbox")


class OutboxMessage(BaseModel):
    id = BigAutoField()
    actor_name = CharField(max_length=120)
    args = BinaryJSONField(default=list)
    request_id = CharField(max_length=128, null=True)
    created_at = created_at_field()
    sent_at = DateTimeTZField(null=True)
    attempts = IntegerField(default=0)
    last_error = TextField(null=True)
    redeliver_at = DateTimeTZField(null=True)
    done_at = DateTimeTZField(null=True)
    dead_at = DateTimeTZField(null=True)

    class Meta:
        table_name = "outbox_message"


@dataclass(frozen=True)
class Redelivery:
    """When a handed-over row that is not done is handed over again, and when it is given up."""

    after_seconds: int = 600
    max_handovers: int = 8
    cap_seconds: int = 6 * 3600


# Hands rows to the broker: one outcome per row, None when the broker took it, else the error (the
# row stays unsent for the sweeper). Raising fails the whole batch.
Sender = Callable[[Sequence[OutboxMessage]], Sequence[BaseException | None]]
_sender: Sender | None = None
_redelivery = Redelivery()


def set_sender(sender: Sender | None) -> None:
    """Install how this process hands a row to the broker (set once at boot)."""
    global _sender
    _sender = sender


def set_redelivery(policy: Redelivery) -> None:
    global _redelivery
    _redelivery = policy


INSERT_ROW = (
    "INSERT INTO outbox_message (actor_name, args, request_id, created_at, attempts)"
    " VALUES (%s, %s, %s, %s, 0) RETURNING id"
)


def enqueue(actor_name: str, *args: object) -> OutboxMessage:
    """Record `actor_name(*args)` to run once the enclosing transaction commits: the row is
    inserted now, in that transaction, and handed to the broker after the commit. Refused outside
    a transaction (RuntimeError); arguments JSON cannot hold are refused here (TypeError)."""
    if not in_transaction():
        raise RuntimeError("outbox.enqueue must run inside transaction()")
    row = OutboxMessage(actor_name=actor_name, args=list(args), attempts=0, request_id=current_request_id(),
                        created_at=clock.now())
    row.id = database.execute_sql(INSERT_ROW, (actor_name, json.dumps(row.args), row.request_id,
                                               row.created_at)).fetchone()[0]
    on_commit(lambda: handoff.submit((row,)))
    return row


def dispatch(ids: list[int]) -> int:
    """Hand the given committed rows to the broker now, in this thread (the CLI and tests)."""
    if not ids or _sender is None:
        return 0
    rows = list(OutboxMessage.select().where(OutboxMessage.id.in_(ids), OutboxMessage.sent_at.is_null()))
    return _hand_over_all(rows)


def _hand_over_all(rows: Iterable[OutboxMessage]) -> int:
    """Give `rows` to the broker and record, one statement each, the rows it
    took (`_mark_sent`) and those it did not (`_record_failures`)."""
    rows = list(rows)
    if not rows:
        return 0
    try:
        outcomes = list(_sender(rows))  # type: ignore[misc]
    except Exception as exc:
        outcomes = [exc] * len(rows)
    failed = [(row, error) for row, error in zip(rows, outcomes, strict=True) if error is not None]
    sent = [row.id for row, error in zip(rows, outcomes, strict=True) if error is None]
    _mark_sent(sent)
    _record_failures(failed)
    return len(sent)


RECORD_FAILURES = (
    "UPDATE outbox_message AS o SET attempts = o.attempts + 1, last_error = f.error"
    " FROM unnest(%s::bigint[], %s::text[]) AS f(id, error) WHERE o.id = f.id"
)


def _record_failures(failed: list[tuple[OutboxMessage, BaseException]]) -> None:
    if not failed:
        return
    row, error = failed[0]
    log.warning(
        "outbox send failed; the sweeper will retry",
        extra={"fields": {"rows": len(failed), "outboxId": row.id, "actor": row.actor_name, "error": str(error)}},
    )
    database.execute_sql(RECORD_FAILURES, ([row.id for row, _ in failed], [str(e)[:2000] for _, e in failed]))


# `attempts` on the right is the value before this hand-over: the n-th hand-over waits base x 2^n.
MARK_SENT = (
    "UPDATE outbox_message SET sent_at = %(now)s, attempts = attempts + 1,"
    " redeliver_at = %(now)s + LEAST(%(base)s * power(2, LEAST(attempts, 20)), %(cap)s) * interval '1 second'"
    " WHERE id = ANY(%(ids)s)"
)


def _mark_sent(ids: list[int]) -> None:
    """One statement for the rows handed over."""
    if ids:
        database.execute_sql(MARK_SENT, {"now": clock.now(), "base": _redelivery.after_seconds,
                                         "cap": _redelivery.cap_seconds, "ids": ids})


class Handoff:
    """This process's hand-over thread: committed rows from every thread are given to the broker
    in batches, off the request threads. Started on first use in each process (after a fork too).
    Rows beyond `capacity` waiting in memory are left to the sweeper (they are committed)."""

    def __init__(self, *, batch_size: int = 500, capacity: int = 20_000) -> None:
        self.batch_size, self.capacity = batch_size, capacity
        self._reset()

    def _reset(self) -> None:
        self._rows: deque[OutboxMessage] = deque()
        self._cond = threading.Condition()
        self._pending = 0
        self._pid = os.getpid()
        self._thread: threading.Thread | None = None

    def submit(self, rows: Iterable[OutboxMessage]) -> None:
        if _sender is None:
            return  # no broker in this process: the sweeper hands the rows over
        if self._pid != os.getpid():
            self._reset()
        with self._cond:
            room = self.capacity - self._pending
            taken = list(rows)[: max(room, 0)]
            self._rows.extend(taken)
            self._pending += len(taken)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="outbox-handoff", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every submitted row was handed over (or failed); False on timeout."""
        if self._pid != os.getpid():
            return True
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._pending:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
        return True

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._rows:
                    self._cond.wait()
                batch = [self._rows.popleft() for _ in range(min(len(self._rows), self.batch_size))]
            try:
                opened = open_connection()
                try:
                    _hand_over_all(batch)
                finally:
                    if opened:
                        close_connection()
            except Exception as exc:  # the database is away: the rows stay unsent for the sweeper
                log.warning("outbox hand-over failed; the sweeper will retry",
                            extra={"fields": {"rows": len(batch), "error": str(exc)}})
            finally:
                with self._cond:
                    self._pending -= len(batch)
                    self._cond.notify_all()


handoff = Handoff()
atexit.register(handoff.flush, 5.0)


def flush(timeout: float = 10.0) -> bool:
    """Wait for this process's pending hand-overs (tests, and commands before they exit)."""
    return handoff.flush(timeout)


def mark_done(outbox_id: int) -> None:
    """Close the row: its actor did the work, or answered with a refusal it declares."""
    OutboxMessage.update(done_at=clock.now()).where(
        OutboxMessage.id == outbox_id, OutboxMessage.done_at.is_null()).execute()


def mark_dead(outbox_id: int, reason: str) -> None:
    OutboxMessage.update(dead_at=clock.now(), last_error=reason[:2000]).where(
        OutboxMessage.id == outbox_id, OutboxMessage.done_at.is_null(), OutboxMessage.dead_at.is_null()
    ).execute()


def postpone_redelivery(outbox_id: int, seconds: float) -> None:
    """A failed attempt Dramatiq will retry: do not re-send the row before that retry had its chance."""
    OutboxMessage.update(redeliver_at=clock.now() + timedelta(seconds=seconds + _redelivery.after_seconds)).where(
        OutboxMessage.id == outbox_id, OutboxMessage.done_at.is_null()
    ).execute()


def sweep(*, older_than_seconds: int = 60, limit: int = 500) -> int:
    """Re-send rows left unsent for `older_than_seconds`, and rows handed over but not done once
    their `redeliver_at` passed (or mark them dead after `max_handovers`); locked rows are left
    to another sweeper. Returns how many rows were handed over."""
    if _sender is None:
        return 0
    now = clock.now()
    cutoff = now - timedelta(seconds=older_than_seconds)
    with transaction():
        unsent = list(
            OutboxMessage.select()
            .where(OutboxMessage.sent_at.is_null(), OutboxMessage.dead_at.is_null(), OutboxMessage.created_at < cutoff)
            .order_by(OutboxMessage.id)
            .limit(limit)
            .for_update("FOR UPDATE SKIP LOCKED")
        )
        lost = list(
            OutboxMessage.select()
            .where(OutboxMessage.sent_at.is_null(False), OutboxMessage.done_at.is_null(),
                   OutboxMessage.dead_at.is_null(), OutboxMessage.redeliver_at < now)
            .order_by(OutboxMessage.id)
            .limit(limit)
            .for_update("FOR UPDATE SKIP LOCKED")
        )
        given_up = [row for row in lost if row.attempts >= _redelivery.max_handovers]
        for row in given_up:
            mark_dead(row.id, f"not done after {row.attempts} hand-overs")
        resent = [row for row in lost if row.attempts < _redelivery.max_handovers]
        sent = _hand_over_all([*unsent, *resent])
    if unsent or lost:
        log.info("outbox sweep", extra={"fields": {
            "unsent": len(unsent), "redelivered": len(resent), "dead": len(given_up), "sent": sent}})
        for row in given_up:
            log.error("outbox row given up", extra={"fields": {"outboxId": row.id, "actor": row.actor_name}})
    return sent


def hand_over_again(*, lost: bool, chunk: int = 1_000) -> tuple[int, int]:
    """Once the broker is back (`backend.broker_epoch`): hand over at once every row whose hand-over
    failed while it was away and, when it lost data (`lost`), every row handed over but not done,
    whatever its `redeliver_at`. Inside the caller's transaction; rows another sweeper holds are
    left to it. Returns (handed over but not done, never handed over) rows handed over now."""
    failed = OutboxMessage.sent_at.is_null() & OutboxMessage.dead_at.is_null() & (OutboxMessage.attempts > 0)
    not_done = (OutboxMessage.sent_at.is_null(False) & OutboxMessage.done_at.is_null()
                & OutboxMessage.dead_at.is_null())
    return (_hand_over_where(not_done, chunk) if lost else 0), _hand_over_where(failed, chunk)


def _hand_over_where(condition, chunk: int) -> int:
    sent, after = 0, 0
    while rows := list(OutboxMessage.select().where(condition, OutboxMessage.id > after).order_by(OutboxMessage.id)
                       .limit(chunk).for_update("FOR UPDATE SKIP LOCKED")):
        sent += _hand_over_all(rows)
        after = rows[-1].id
    return sent


def unsent_count() -> int:
    unsent = OutboxMessage.sent_at.is_null() & OutboxMessage.dead_at.is_null()
    return OutboxMessage.select().where(unsent).count(database)


def backlog() -> dict:
    """The figures operators watch: rows not handed over, handed over but not done (with the
    oldest one's age in seconds), and dead rows."""
    cursor = database.execute_sql(
        "SELECT count(*) FILTER (WHERE sent_at IS NULL AND dead_at IS NULL),"
        " count(*) FILTER (WHERE sent_at IS NOT NULL AND done_at IS NULL AND dead_at IS NULL),"
        " min(sent_at) FILTER (WHERE sent_at IS NOT NULL AND done_at IS NULL AND dead_at IS NULL),"
        " count(*) FILTER (WHERE dead_at IS NOT NULL)"
        " FROM outbox_message WHERE done_at IS NULL"
    )
    unsent, not_done, oldest, dead = cursor.fetchone()
    age = max(0.0, (clock.now() - oldest).total_seconds()) if oldest else 0.0
    return {"unsent": unsent, "notDone": not_done, "oldestNotDoneSeconds": round(age, 1), "dead": dead}
