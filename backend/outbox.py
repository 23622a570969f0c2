"""The outbox: follow-up work recorded in the same transaction as the change that causes it, and
closed only when its actor has done the work.

The life of a row:

1. `enqueue("actor_name", *args)` inserts it inside the caller's `transaction()`: when the
   innermost `transaction()` block ends, all the rows it enqueued in one statement (a block
   that raises drops them with its savepoint).
2. After the commit of the (sub)transaction that created it, the row goes to this process's
   hand-over thread (`Handoff`), which gives rows to the broker in batches (the sender takes a
   batch at once: one pipelined Redis round trip, `actors.broker.enqueue_many`) and marks each
   batch `sent_at` in one statement; the rows the broker refused get one statement too. The
   request thread never talks to Redis: a Redis stall delays the hand-over, never an answer. A
   row of a rolled-back transaction or savepoint never reaches the thread (the hand-over is an
   after-commit hook of the block that created it), and the rows are handed over from memory,
   not read back.
3. The worker's `OutboxCompletion` middleware (`actors/broker.py`) closes the row (`done_at`,
   like `sent_at` a commit that does not wait for the disk) when its actor returned, or raised
   an exception it declares in `throws` (a refusal is an answer); it marks it `dead_at` when
   Dramatiq gives the message up (retries exhausted). The marks of returned actors are written
   together (`DoneMarks`): the worker's threads' marks in one statement, then their messages'
   acknowledgements, so a message is acknowledged only after its mark is committed: a worker
   that dies in between leaves the message to Redis, which hands it to another worker.
4. `sweep()`, every minute on the clock, re-sends (a) rows never handed over after
   `OUTBOX_RESEND_AFTER_SECONDS` (a crash or a Redis outage between commit and hand-over) and
   (b) rows handed over but not done once their `redeliver_at` passed: Redis lost the message
   (restart without persistence, FLUSHALL, eviction) or it died with a worker. Each hand-over
   doubles the wait (`OUTBOX_REDELIVER_AFTER_SECONDS` x 2^n, at most 6 h); a row still not done
   after `OUTBOX_MAX_HANDOVERS` hand-overs is marked dead, which `vitrine queues` and
   `/api/metrics` show. A Redis that lost its data is found sooner by its epoch marker
   (`backend.broker_epoch`), which hands every row handed over but not done over again at once
   (`hand_over_again`). Actors are idempotent, so a re-sent message whose first copy ran after
   all is harmless: work is done at least once end to end, never lost.
"""

from __future__ import annotations

import atexit
import functools
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

from backend import clock, prepared
from backend.context import current_request_id
from backend.db import (
    block_batch,
    close_connection,
    database,
    in_transaction,
    on_commit,
    open_connection,
    transaction,
    write_block_batches,
)
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

    @classmethod
    def select(cls, *fields):
        # Rows this thread enqueued wait in their transaction() block: a read sees them.
        write_block_batches()
        return super().select(*fields)


@dataclass(frozen=True)
class Redelivery:
    """When a handed-over row that is not done is handed over again, and when it is given up."""

    after_seconds: int = 600
    max_handovers: int = 8
    cap_seconds: int = 6 * 3600


# Hands rows to the broker, all at once where it can: one outcome per row, None when the broker
# took it, else the error (the row stays unsent for the sweeper). Raising fails the whole batch.
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


# Written out, and many rows in one statement: every follow-up of every service pays it (peewee
# building an INSERT per row cost several times what PostgreSQL spends running it).
INSERT_ROW = (
    "INSERT INTO outbox_message (actor_name, args, request_id, created_at, attempts)"
    " VALUES (%s, %s, %s, %s, 0) RETURNING id"
)
INSERT_ROWS = "INSERT INTO outbox_message (id, actor_name, args, request_id, created_at, attempts) VALUES {rows}"
NEXT_IDS = "SELECT nextval(pg_get_serial_sequence('outbox_message', 'id')) FROM generate_series(1, %s)"
INSERT_CHUNK = 1_000  # rows per statement (5 parameters each; PostgreSQL takes at most 65,535)


def enqueue(actor_name: str, *args: object) -> OutboxMessage:
    """Record `actor_name(*args)` to run once the enclosing transaction commits. The row is
    written when the innermost `transaction()` block ends (or a nested block starts, or this
    thread reads `OutboxMessage`), with the other rows waiting in the block in one statement;
    its `id` is set then."""
    row = _new_row("enqueue", actor_name, args)
    # Serialized now: arguments JSON cannot hold are refused at the call (TypeError), not at the block's end.
    block_batch("outbox", _write_rows).append((row, json.dumps(row.args)))
    return row


@dataclass(frozen=True)
class Part:
    """A row for a service that inserts it as a part of one of its own statements (a `WITH` part
    `<name> AS (part_fragment(name))`, whose `RETURNING id` the statement hands back): one round trip
    less than `enqueue`. Once the statement ran, `written(id)` hands the row over after the
    enclosing transaction commits, as `enqueue`'s rows are."""

    name: str
    row: OutboxMessage
    params: dict

    def written(self, row_id: int) -> None:
        self.row.id = row_id
        on_commit(lambda: handoff.submit((self.row,)))


@functools.lru_cache(maxsize=64)
def part_fragment(name: str) -> prepared.Fragment:
    """The `INSERT ... RETURNING id` of a `Part` called `name` (its values are named `<name>_*`)."""
    if not name.isidentifier():
        raise ValueError(f"an outbox part's name is an SQL identifier: {name!r}")
    return prepared.Fragment(
        f"INSERT INTO outbox_message (actor_name, args, request_id, created_at, attempts) VALUES"  # noqa: S608
        f" (%({name}_actor)s, %({name}_args)s, %({name}_request)s, %({name}_created)s, 0) RETURNING id")


def part(actor_name: str, *args: object, name: str) -> Part:
    """`actor_name(*args)` as a `Part` of the caller's statement (inside its `transaction()`)."""
    row = _new_row("part", actor_name, args)
    return Part(name, row, part_fragment(name).values(**{
        f"{name}_actor": actor_name, f"{name}_args": json.dumps(row.args), f"{name}_request": row.request_id,
        f"{name}_created": row.created_at}))


def _new_row(caller: str, actor_name: str, args: tuple) -> OutboxMessage:
    """The row of `actor_name(*args)`, not written yet; refused outside a transaction."""
    if not in_transaction():
        raise RuntimeError(f"outbox.{caller} must run inside transaction()")
    return OutboxMessage(__no_default__=True, actor_name=actor_name, args=list(args), attempts=0,
                         request_id=current_request_id(), created_at=clock.now())


def _write_rows(pending: list[tuple[OutboxMessage, str]]) -> None:
    """Insert a block's rows (ids in enqueue order) and hand them over once committed, from memory."""
    if len(pending) == 1:
        [(row, args)] = pending
        row.id = database.execute_sql(INSERT_ROW, (row.actor_name, args, row.request_id,
                                                   row.created_at)).fetchone()[0]
    else:
        ids = sorted(n for (n,) in database.execute_sql(NEXT_IDS, (len(pending),)).fetchall())
        for (row, _), row_id in zip(pending, ids, strict=True):
            row.id = row_id
        for start in range(0, len(pending), INSERT_CHUNK):
            chunk = pending[start:start + INSERT_CHUNK]
            params = [value for row, args in chunk
                      for value in (row.id, row.actor_name, args, row.request_id, row.created_at)]
            database.execute_sql(INSERT_ROWS.format(rows=", ".join(["(%s, %s, %s, %s, %s, 0)"] * len(chunk))),
                                 params)
    written = tuple(row for row, _ in pending)
    on_commit(lambda: handoff.submit(written))


def dispatch(ids: list[int]) -> int:
    """Hand the given committed rows to the broker now, in this thread (the CLI and tests)."""
    if not ids or _sender is None:
        return 0
    rows = list(OutboxMessage.select().where(OutboxMessage.id.in_(ids), OutboxMessage.sent_at.is_null()))
    return _hand_over_all(rows)


def _hand_over_all(rows: Iterable[OutboxMessage]) -> int:
    """Give `rows` to the broker (one call for all) and record, one statement each, the rows it
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
        _write_unflushed(MARK_SENT, {"now": clock.now(), "base": _redelivery.after_seconds,
                                     "cap": _redelivery.cap_seconds, "ids": ids})


def _write_unflushed(sql: str, params: object) -> None:
    """Run `sql` in a transaction of its own whose commit does not wait for the disk (one round
    trip), or in the enclosing transaction, which decides. Only for the outbox's bookkeeping marks
    (`sent_at`, `done_at`): a mark a crash loses makes the sweeper send the row again, which
    at-least-once actors tolerate, and a flush per message was most of its cost."""
    if in_transaction():  # the sweeper's transaction, a test's
        database.execute_sql(sql, params)
        return
    database.execute_sql(f"BEGIN; SET LOCAL synchronous_commit TO OFF; {sql}; COMMIT", params)


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


MARK_DONE = "UPDATE outbox_message SET done_at = %s WHERE id = %s AND done_at IS NULL"
MARK_DONE_MANY = (
    "UPDATE outbox_message AS o SET done_at = d.at FROM unnest(%s::bigint[], %s::timestamptz[]) AS d(id, at)"
    " WHERE o.id = d.id AND o.done_at IS NULL"
)


def mark_done(outbox_id: int) -> None:
    """Close the row now, in this thread (a refusal the actor declares in `throws`)."""
    _write_unflushed(MARK_DONE, (clock.now(), outbox_id))


# What follows a batch of done marks once written: the tokens `DoneMarks.defer` was given for them.
FollowUp = Callable[[list], None]


class DoneMarks:
    """This worker process's done marks: the worker's threads leave the row of each message whose
    actor returned (`add`, keyed by the message's delivery), and what must come after the mark,
    the broker's acknowledgement of the message, goes through `follow`: a thread that finds no
    statement on its way writes every mark waiting in one statement (`MARK_DONE_MANY`, a commit
    that does not wait for the disk) and has the follow-up (`set_follow_up`) do their
    acknowledgements at once; a thread that finds one on its way waits for the writer to take its
    mark in the next. A statement per message, with its commit, was a third of the worker's busy
    time (docs/benchmarks.md, "Outbox end to end"). The process's done-mark thread writes the
    marks no thread follows (a message Dramatiq rejects) after `linger` seconds, follow-ups to try
    again, and what a flush asks for.

    A thread waits in `follow` until its message is acknowledged. A message is never
    acknowledged before its row is done, and a worker thread holds at most one message between
    its actor's return and its acknowledgement, as before: a worker killed meanwhile leaves those
    messages to another worker (Redis re-delivers unacknowledged messages), and no row is left not
    done once its message is gone. A statement that fails (the database away) is logged and its
    messages acknowledged all the same: the sweeper re-sends the rows, as when a single mark
    failed. A follow-up that fails (Redis away) is tried again every `retry_seconds`, its threads
    waiting, as Dramatiq's own acknowledgement does. `flush` waits for all of it (the worker's
    shutdown, the exit)."""

    def __init__(self, *, linger: float = 0.05, batch_size: int = 1_000, retry_seconds: float = 1.0) -> None:
        self.linger, self.batch_size, self.retry_seconds = linger, batch_size, retry_seconds
        self._follow_up: FollowUp | None = None
        self._reset()

    def _reset(self) -> None:
        self._cond = threading.Condition()
        self._waiting: dict[object, tuple[int, object]] = {}  # key -> (outbox id, done at)
        self._writing: set[object] = set()  # the keys of the statement being written
        self._followers: dict[object, tuple[object, threading.Event]] = {}  # key -> (token, done), until written
        self._unsettled: list[tuple[object, threading.Event]] = []  # follow-ups that failed, tried again
        self._busy = False
        self._pid = os.getpid()
        self._thread: threading.Thread | None = None

    def set_follow_up(self, follow_up: FollowUp | None) -> None:
        self._follow_up = follow_up

    def add(self, outbox_id: int, key: object) -> None:
        """The actor of `outbox_id`'s message (delivery `key`) returned: its row is done."""
        if self._pid != os.getpid():
            self._reset()
        with self._cond:
            self._waiting[key] = (outbox_id, clock.now())
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="outbox-done-marks", daemon=True)
                self._thread.start()
            if len(self._waiting) == 1:  # the writer waits for a first mark (the later ones leave its linger alone)
                self._cond.notify_all()

    def follow(self, key: object, token: object) -> bool:
        """Have the follow-up do `token` once the mark of `key` is written, and wait until it did:
        True then; False at once when no mark of `key` waits (none, or written): the caller acts."""
        if self._pid != os.getpid() or self._follow_up is None:
            return False
        done = threading.Event()
        with self._cond:
            if key not in self._waiting and key not in self._writing:
                return False
            self._followers[key] = (token, done)
            lead = not self._busy
            self._busy = True
        if lead:  # no statement on its way: this thread writes the waiting marks itself
            self._write_waiting()
        done.wait()
        return True

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every mark added is written and its follow-up done; False on timeout."""
        if self._pid != os.getpid():
            return True
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._waiting or self._busy or self._unsettled:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.notify_all()  # a linger or a retry waiting for its turn goes now
                self._cond.wait(min(remaining, 0.05))
        return True

    def _run(self) -> None:
        """The marks no worker thread waits for (a message Dramatiq rejects), follow-ups to try
        again, and a flush: written when no thread writes (the threads write their own)."""
        while True:
            with self._cond:
                while not self._waiting and not self._unsettled:
                    self._cond.wait()
                self._cond.wait(self.linger if self._waiting else self.retry_seconds)
                if self._busy:
                    continue
                self._busy = True
            self._write_waiting(retry=True)

    def _write_waiting(self, *, retry: bool = False) -> None:
        """Write every waiting mark, a statement per `batch_size`, and do their follow-ups; the
        caller set `_busy` (one writer at a time) and this clears it."""
        while True:
            with self._cond:
                if not self._waiting and not (retry and self._unsettled):
                    self._busy = False
                    self._cond.notify_all()
                    return
                keys = list(self._waiting)[: self.batch_size]
                batch = [self._waiting.pop(key) for key in keys]
                self._writing = set(keys)
                unsettled, self._unsettled = (self._unsettled, []) if retry else ([], self._unsettled)
            try:
                self._write(batch)
            finally:
                with self._cond:
                    followers = [*unsettled, *(self._followers.pop(key) for key in keys if key in self._followers)]
                    self._writing = set()
                self._settle(followers)
            retry = False

    @staticmethod
    def _write(batch: list[tuple[int, object]]) -> None:
        if not batch:
            return
        try:
            opened = open_connection()
            try:
                _write_unflushed(MARK_DONE_MANY, ([row_id for row_id, _ in batch], [at for _, at in batch]))
            finally:
                if opened:
                    close_connection()
        except Exception as exc:  # the database is away: the sweeper re-sends these rows
            log.warning("outbox done marks not recorded; the sweeper will re-send",
                        extra={"fields": {"rows": len(batch), "outboxId": batch[0][0], "error": str(exc)}})

    def _settle(self, followers: list[tuple[object, threading.Event]]) -> None:
        if not followers:
            return
        try:
            self._follow_up([token for token, _ in followers])  # type: ignore[misc]
        except Exception as exc:
            log.warning("outbox done marks' follow-up failed; tried again",
                        extra={"fields": {"messages": len(followers), "error": str(exc)}})
            with self._cond:
                self._unsettled.extend(followers)
            return
        for _, done in followers:
            done.set()


done_marks = DoneMarks()
atexit.register(done_marks.flush, 5.0)


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
