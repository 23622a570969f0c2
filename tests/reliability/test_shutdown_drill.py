"""The shutdown drill: a platform stopping the worker (a deploy) sends SIGTERM to its whole process
group mid-work; the work in progress is finished within `WORKER_SHUTDOWN_TIMEOUT`, the rest handed
back, and a new worker does it: every message done exactly once, none cut."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from backend import outbox
from backend.db import database, transaction
from tests.reliability import drill_actors  # noqa: F401  (declares drill_work in this process)
from tests.reliability.drill import ROOT, books_hold, kill, start_worker, wait_for
from tests.reliability.drill_actors import DONE

pytestmark = [pytest.mark.drills, pytest.mark.committed]

SHUTDOWN_TIMEOUT = 10


def _done() -> dict[str, int]:
    return dict(database.execute_sql(DONE).fetchall())


def _vitrine_worker(log_dir) -> subprocess.Popen:
    """`vitrine worker` as the Procfile starts it, in a process group of its own as a platform or
    honcho gives it, with the drill's actor besides the platform's."""
    log = open(log_dir / "vitrine-worker.log", "ab")  # noqa: SIM115 (kept open for the child)
    return subprocess.Popen(
        [sys.executable, "-m", "ops.cli", "worker", "tests.reliability.drill_actors",
         "--processes", "2", "--threads", "4", "--queues", "default"],
        cwd=ROOT, env={**os.environ, "WORKER_SHUTDOWN_TIMEOUT": str(SHUTDOWN_TIMEOUT)},
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def test_sigterm_to_the_worker_s_group_mid_work_drains_it_and_loses_or_doubles_nothing(drill_table, tmp_path):
    tokens = [f"stop-{i}" for i in range(200)]
    worker = _vitrine_worker(tmp_path)
    try:
        with transaction():
            for token in tokens:
                outbox.enqueue("drill_work", token, 300)  # jobs long enough that a stop finds some in flight
        assert outbox.flush(timeout=30), "the burst was not handed over to Redis"
        wait_for(lambda: len(_done()) >= 24, timeout=90)
        os.killpg(worker.pid, signal.SIGTERM)  # what the platform (and honcho) send: the whole group
        asked = time.monotonic()
        status = worker.wait(timeout=SHUTDOWN_TIMEOUT + 20)
        stopped_in = time.monotonic() - asked
    finally:
        if worker.poll() is None:  # the drill failed before the worker stopped
            kill(worker)
    at_stop = _done()
    log = (tmp_path / "vitrine-worker.log").read_text(errors="replace")
    follower = start_worker(tmp_path)
    try:
        recovery = wait_for(lambda: len(_done()) == len(tokens), timeout=90)
    finally:
        kill(follower, signal.SIGTERM)
    done = _done()
    doubled = sum(runs - 1 for runs in done.values())
    print(f"shutdown drill: SIGTERM to the group after {len(at_stop)} done; stopped in {stopped_in:.1f} s "
          f"(status {status}); the rest ({len(tokens) - len(at_stop)}) done {recovery:.1f} s later by a new "
          f"worker; {doubled} executed twice, {len(tokens) - len(done)} lost")
    assert "Killing worker process" not in log
    assert status == 0, log[-3000:]
    assert stopped_in < SHUTDOWN_TIMEOUT + 5
    assert set(done) == set(tokens)
    assert doubled == 0  # nothing cut in progress: no message ran twice
    assert recovery < 60  # mostly the new worker's boot
    assert outbox.backlog()["notDone"] == 0
    books_hold(database)
