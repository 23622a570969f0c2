"""Fault drills, as tests (marker `drills`; `.ci/run` runs them with the suite, `-m drills` alone).

Each drill drives real processes (a `dramatiq` worker started like the Procfile's) against the
session's PostgreSQL and Redis, breaks something, and asserts that every piece of work is done
exactly once (one row per token; `runs` above 1 are the redeliveries at-least-once allows) and
the time to recover within its bound. PostgreSQL is restarted in test_postgres_drill.py (a server
of the drill's own); Redis losing its data in test_redis_loss_drills.py, the restore drill in
test_restore_drill.py.
"""

from __future__ import annotations

import signal
import threading
import time

import pytest

from backend import outbox
from backend.db import database, transaction
from tests.reliability import drill_actors  # noqa: F401  (declares drill_work in this process)
from tests.reliability.drill import books_hold, kill, start_worker, wait_for
from tests.reliability.drill_actors import DONE

pytestmark = [pytest.mark.drills, pytest.mark.committed]


def _done() -> dict[str, int]:
    return dict(database.execute_sql(DONE).fetchall())


def _enqueue(tokens: list[str], delay_ms: int = 0) -> None:
    with transaction():
        for token in tokens:
            outbox.enqueue("drill_work", token, delay_ms)


def test_a_worker_killed_mid_burst_loses_nothing(drill_table, tmp_path):
    tokens = [f"kill-{i}" for i in range(300)]
    worker = start_worker(tmp_path)
    try:
        _enqueue(tokens, delay_ms=20)
        assert outbox.flush(timeout=30), "the burst was not handed over to Redis"
        wait_for(lambda: len(_done()) >= 40, timeout=60)
        kill(worker)  # kill -9: the messages it held stay unacknowledged in Redis
        killed_at = len(_done())
        worker = start_worker(tmp_path)
        recovery = wait_for(lambda: len(_done()) == len(tokens), timeout=60)
    finally:
        kill(worker, signal.SIGTERM)
    done = _done()
    doubled = sum(runs - 1 for runs in done.values())
    print(f"kill -9 drill: {killed_at} done at the kill, all {len(done)} done {recovery:.1f} s later, "
          f"{doubled} redelivered executions")
    assert set(done) == set(tokens)
    assert doubled <= 4  # at most the messages in flight in the killed worker's 4 threads
    assert recovery < 45  # heartbeat timeout 15 s + maintenance every 5 s, plus the new worker's boot
    assert outbox.backlog()["notDone"] == 0
    books_hold(database)


def test_a_frozen_redis_holds_no_request_and_the_work_follows(drill_table, broker, client, tmp_path):
    from tests.onboarding.conftest import event_body, signed_headers

    frozen = threading.Thread(target=lambda: broker.client.execute_command("DEBUG", "SLEEP", "3"))
    frozen.start()
    time.sleep(0.2)  # the freeze has begun (DEBUG SLEEP holds the server, not this test)
    latencies = []
    for i in range(10):
        body = event_body("signer.link_opened", f"prov-frozen-{i}", event_id=f"evt-frozen-{i}")
        started = time.monotonic()
        assert client.simulate_post("/api/webhooks/esign", body=body, headers=signed_headers(body)).status_code == 200
        latencies.append(time.monotonic() - started)
    _enqueue([f"frozen-{i}" for i in range(10)])
    frozen.join()
    worker = start_worker(tmp_path)
    try:
        recovery = wait_for(lambda: len(_done()) == 10, timeout=60)
    finally:
        kill(worker, signal.SIGTERM)
    print(f"frozen Redis drill: webhook answers max {max(latencies) * 1000:.0f} ms during a 3 s freeze; "
          f"work done {recovery:.1f} s after it")
    assert max(latencies) < 1.0  # the answer never waits for the frozen Redis (3 s)
    books_hold(database)
