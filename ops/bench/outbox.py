"""`vitrine bench outbox`: follow-up work through the outbox against plain `send()`.

Vitrine: `outbox.enqueue("noop", i)` inside `transaction()`, in transactions of `BATCH` rows; each
commit's hook gives its rows to the process's hand-over thread, which sends them to Redis (a
batch of up to 500 in one pipelined round trip) and marks them sent; commit + dispatch ends when
that thread has handed every row over (`outbox.flush()`): the end of the commits alone would
leave rows not yet in Redis uncounted.
Reference: `noop.send(i)` of as many messages. Both are processed by the same real worker
subprocess, started (and probed) before either is timed. Two figures each: messages/s until the
last one is in Redis (commit + dispatch), and until the worker has processed every one (end to
end: the `default` queue holds none, since a Redis message stays there until acknowledged, and the
worker acknowledges an outbox message only once its row's done mark is committed). The
messages go in alternating rounds (reference, outbox, reference, outbox) so that load other users
put on the shared machine hits both alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ops.bench.report import SHARED_CORES_NOTE, Figure, Result

NAME = "outbox"
DESCRIPTION = "10,000 outbox rows committed, dispatched and processed; reference: noop.send() x 10,000"
BATCH = 100
QUEUE = "default"


def run(stack, quick: bool) -> Result:
    from actors.broker import queue_sizes
    from actors.diagnostics import noop
    from backend import outbox
    from backend.db import database, transaction

    broker = stack.broker()
    messages, rounds = (1_000, 1) if quick else (10_000, 2)
    per_round = messages // rounds

    def queue() -> dict:
        return next(row for row in queue_sizes(broker) if row["queue"] == QUEUE)

    def drained(timeout: float) -> None:
        deadline = time.monotonic() + timeout
        # Polled every 10 ms: about 1 % of the shortest timed run (quick, reference), light on Redis.
        while (row := queue())["messages"] + row["delayed"]:
            stack.check_alive("worker")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the worker left {QUEUE} unprocessed after {timeout:g} s")
            time.sleep(0.01)

    def send_plain() -> None:
        for i in range(per_round):
            noop.send(i)

    def commit_outbox() -> None:
        for start in range(0, per_round, BATCH):
            with transaction():
                for i in range(start, min(start + BATCH, per_round)):
                    outbox.enqueue("noop", i)
        if not outbox.flush(timeout=120):
            raise RuntimeError("the outbox hand-over thread did not hand every row over in 120 s")

    reference = ours = (0.0, 0.0)
    with database.connection_context(), stack.worker("worker"):
        noop.send("probe")  # the worker has booted once its first message is processed
        drained(timeout=60)
        for _ in range(rounds):
            reference = _add(reference, _timed(send_plain, lambda: drained(timeout=120)))
            ours = _add(ours, _timed(commit_outbox, lambda: drained(timeout=120)))
        unsent, not_done = outbox.unsent_count(), outbox.backlog()["notDone"]
    left = queue()
    return Result(
        title=f"{messages:,} messages to the noop actor, committed then processed",
        reference=f"noop.send(i) x {messages:,}, no database, processed by the same worker",
        settings=[
            stack.worker_settings,
            f"outbox: {messages // BATCH} transactions of {BATCH} rows, handed over by the hand-over thread; "
            f"{rounds} alternating round(s) of {per_round:,} messages each",
        ],
        figures=[
            Figure("commit + dispatch (msg/s)", messages / ours[0], messages / reference[0]),
            Figure("end to end (msg/s)", messages / ours[1], messages / reference[1]),
            Figure("commit + dispatch (s)", ours[0], reference[0], summary=False),
            Figure("end to end (s)", ours[1], reference[1], summary=False),
        ],
        checks=[
            f"outbox rows unsent: {unsent}, handed over but not done: {not_done} (expected 0, 0)",
            f"{QUEUE} queue after the run: {left['delayed']} delayed, {left['dead']} dead (expected 0)",
        ],
        notes=[SHARED_CORES_NOTE],
        ok=unsent == 0 and not_done == 0 and left["delayed"] == 0 and left["dead"] == 0,
    )


def _add(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    return a[0] + b[0], a[1] + b[1]


def _timed(produce: Callable[[], None], wait_processed: Callable[[], None]) -> tuple[float, float]:
    """Seconds until `produce` returns and until every message is processed, both from its start."""
    began = time.perf_counter()
    produce()
    produced = time.perf_counter() - began
    wait_processed()
    return produced, time.perf_counter() - began
