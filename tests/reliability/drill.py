"""What the fault drills share: a `dramatiq` worker started like the Procfile's (in a process group
of its own, so it can be frozen and killed whole), bounded waits on real conditions, restarts of
the session's own Redis, and the checks every drill ends with (`books_hold`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import redis

from backend import embedded

ROOT = Path(__file__).resolve().parents[2]


def start_worker(log_dir: Path, *, modules: tuple[str, ...] = ("actors", "tests.reliability.drill_actors"),
                 queues: tuple[str, ...] = ("default",), threads: int = 4,
                 env: dict[str, str] | None = None) -> subprocess.Popen:
    log = open(log_dir / "worker.log", "ab")  # noqa: SIM115 (kept open for the child)
    return subprocess.Popen(
        [sys.executable, "-m", "dramatiq", *modules, "--processes", "1", "--threads", str(threads),
         "--queues", *queues],
        cwd=ROOT, env={**os.environ, **(env or {})}, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def signal_worker(worker: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(worker.pid, sig)


def kill(worker: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    signal_worker(worker, signal.SIGCONT)  # a frozen worker cannot end
    signal_worker(worker, sig)
    worker.wait(timeout=30)


def wait_for(condition: Callable[[], bool], timeout: float) -> float:
    """Poll `condition` until true; the seconds it took (fails past `timeout`)."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, "the drill did not recover within its bound"
        time.sleep(0.2)
    return time.monotonic() - started


def restart_redis(data_dir: Path, *, keep_data: bool) -> None:
    """Stop the embedded Redis of `data_dir` and start it again: with its data (saved, then reloaded
    from its append-only file), or without (as a Redis without persistence restarts: empty)."""
    url = embedded.redis_url_for(embedded.redis_socket(data_dir))
    with contextlib.suppress(redis.ConnectionError):  # the server closes the connection as it stops
        redis.Redis.from_url(url).shutdown(save=keep_data, nosave=not keep_data)
    if not keep_data:
        workdir = (data_dir / "redis").resolve()
        for leftover in [*workdir.glob("*.aof"), *workdir.glob("*.rdb"), *workdir.glob("appendonlydir")]:
            shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
    embedded.ensure_redis(data_dir)


def pg_binary(name: str) -> Path:
    """A client program of the embedded PostgreSQL (`pg_dump`, `pg_restore`, `psql`...)."""
    import pgserver

    return Path(pgserver.__file__).parent / "pginstall" / "bin" / name


def books_hold(database) -> None:
    """The checks a drill ends with, on the database it drilled (`database`, the peewee database
    `backend.db.database` points at): invoice numbers unique and gapless in every series, each
    series' counter at its last number, and `vitrine accounting verify`'s checks of the books
    (balanced, validated and gapless entries, each invoice and payment posted once at its amounts)."""
    from backend.billing.accounting.verify import verify

    rows = database.execute_sql(
        "SELECT series, count(*), count(DISTINCT number),"
        " max(CAST(substring(number FROM '([0-9]+)$') AS integer)) FROM billing_invoice GROUP BY series").fetchall()
    counters = dict(database.execute_sql("SELECT series, last_value FROM billing_number_counter").fetchall())
    for series, count, distinct, last in rows:
        assert count == distinct == last, f"series {series}: {count} invoices, {distinct} numbers, last {last}"
        assert counters.get(series) == last, f"series {series}: counter {counters.get(series)}, last number {last}"
    breaches = verify()
    assert not breaches, "the books do not hold:\n" + "\n".join(breaches)
