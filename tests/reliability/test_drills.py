"""Fault drills, as tests (marker `drills`; `.ci/run` runs them with the suite, `-m drills` alone).

Each drill drives real processes (a `dramatiq` worker started like the Procfile's) against the
session's PostgreSQL and Redis, breaks something, and asserts that every piece of work is done
exactly once (one row per token; `runs` above 1 are the redeliveries at-least-once allows) and
the time to recover within its bound. PostgreSQL is not restarted here: the test server is shared
by the parallel test sessions (the drill is in docs/operations.md, to run by hand).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import psycopg2
import pytest
from psycopg2 import sql

from backend import clock, outbox
from backend.database_roles import current_role
from backend.db import database, transaction
from tests.reliability import drill_actors  # noqa: F401  (declares drill_work in this process)
from tests.reliability.drill_actors import CREATE, DONE

pytestmark = [pytest.mark.drills, pytest.mark.committed]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def drill_table(broker):
    """The drill's table, made by the owner for the runtime role (the drill's processes)."""
    with psycopg2.connect(os.environ["DATABASE_OWNER_URL"]) as owner, owner.cursor() as cursor:
        cursor.execute(CREATE)
        cursor.execute("TRUNCATE drill_work")
        cursor.execute(sql.SQL("GRANT SELECT, INSERT, UPDATE ON drill_work TO {}").format(
            sql.Identifier(current_role(os.environ["DATABASE_URL"]))))
    try:
        yield
    finally:
        with owner, owner.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS drill_work")
        owner.close()


def _start_worker(tmp_path: Path) -> subprocess.Popen:
    log = open(tmp_path / "worker.log", "ab")  # noqa: SIM115 (kept open for the child)
    return subprocess.Popen(
        [sys.executable, "-m", "dramatiq", "actors", "tests.reliability.drill_actors",
         "--processes", "1", "--threads", "4", "--queues", "default"],
        cwd=ROOT, env=os.environ.copy(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def _kill(worker: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(worker.pid, sig)
    worker.wait(timeout=30)


def _done() -> dict[str, int]:
    return dict(database.execute_sql(DONE).fetchall())


def _wait_for(condition, timeout: float) -> float:
    """Poll `condition` until true; the seconds it took (fails past `timeout`)."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, "the drill did not recover within its bound"
        time.sleep(0.2)
    return time.monotonic() - started


def _enqueue(tokens: list[str], delay_ms: int = 0) -> None:
    with transaction():
        for token in tokens:
            outbox.enqueue("drill_work", token, delay_ms)


def test_a_worker_killed_mid_burst_loses_nothing(drill_table, tmp_path):
    tokens = [f"kill-{i}" for i in range(300)]
    worker = _start_worker(tmp_path)
    try:
        _enqueue(tokens, delay_ms=20)
        assert outbox.flush(timeout=30), "the burst was not handed over to Redis"
        _wait_for(lambda: len(_done()) >= 40, timeout=60)
        _kill(worker)  # kill -9: the messages it held stay unacknowledged in Redis
        killed_at = len(_done())
        worker = _start_worker(tmp_path)
        recovery = _wait_for(lambda: len(_done()) == len(tokens), timeout=60)
    finally:
        _kill(worker, signal.SIGTERM)
    done = _done()
    doubled = sum(runs - 1 for runs in done.values())
    print(f"kill -9 drill: {killed_at} done at the kill, all {len(done)} done {recovery:.1f} s later, "
          f"{doubled} redelivered executions")
    assert set(done) == set(tokens)
    assert doubled <= 4  # at most the messages in flight in the killed worker's 4 threads
    assert recovery < 45  # heartbeat timeout 15 s + maintenance every 5 s, plus the new worker's boot
    assert outbox.backlog()["notDone"] == 0


def test_redis_losing_its_queued_messages_loses_no_work(drill_table, broker, tmp_path):
    tokens = [f"flush-{i}" for i in range(100)]
    _enqueue(tokens)
    assert outbox.flush()
    broker.client.flushall()  # Redis restarted without its data: 100 messages gone
    assert outbox.backlog()["notDone"] == len(tokens)
    started = time.monotonic()
    with clock.frozen_at(clock.now() + timedelta(seconds=601)):  # the first re-send is due
        assert outbox.sweep() == len(tokens)
    worker = _start_worker(tmp_path)
    try:
        _wait_for(lambda: len(_done()) == len(tokens), timeout=60)
        _wait_for(lambda: outbox.backlog()["notDone"] == 0, timeout=30)
    finally:
        _kill(worker, signal.SIGTERM)
    print(f"FLUSHALL drill: {len(tokens)} re-sent by one sweep, all done {time.monotonic() - started:.1f} s later")
    assert all(runs == 1 for runs in _done().values())


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
    worker = _start_worker(tmp_path)
    try:
        recovery = _wait_for(lambda: len(_done()) == 10, timeout=60)
    finally:
        _kill(worker, signal.SIGTERM)
    print(f"frozen Redis drill: webhook answers max {max(latencies) * 1000:.0f} ms during a 3 s freeze; "
          f"work done {recovery:.1f} s after it")
    assert max(latencies) < 1.0  # the answer never waits for the frozen Redis (3 s)
