"""The benchmark stack: a database, a Redis, web and worker processes of its own, on 127.0.0.1.

`open_stack()` yields a `Stack` and stops everything it started when the block ends:

- PostgreSQL: the server of the environment's `DATABASE_URL` when set, else an embedded one under
  `<data dir>/bench/postgres`; either way a database `vitrine_bench`, recreated and migrated for
  each run so figures never depend on rows a previous run left.
- Redis: the environment's `REDIS_URL` with its logical database switched to 15 (flushed, so a
  developer's queues are never touched), else an embedded one under `<data dir>/bench/redis`.
- `stack.serve(app)`: gunicorn with the production settings (`ops/gunicorn.conf.py`) and a fixed
  concurrency, `WEB_WORKERS` x `WEB_THREADS`, on a free 127.0.0.1 port, for Vitrine
  (`api.app:create_app()`) or any other WSGI app (a scenario's reference).
- `stack.worker()`: `python -m dramatiq actors --processes 1 --threads 8`.
- This process is booted on the same settings (`stack.config`, `stack.broker()`), so a scenario
  can call services and send messages itself.

Child output goes to `<data dir>/bench/logs/<name>.log`, which an error message names.
"""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import requests

import ops
from backend import embedded
from backend.config import Config

ROOT = Path(ops.__file__).resolve().parent.parent
GUNICORN_CONF = ROOT / "ops" / "gunicorn.conf.py"
BENCH_DATABASE = "vitrine_bench"
BENCH_TEMPLATE = "vitrine_bench_template"  # the freshly migrated database, copied by `Stack.fresh`
BENCH_REDIS_DB = 15
# Fixed so that runs compare: production's default WEB_CONCURRENCY (2) with its 8 threads each.
WEB_WORKERS = 2
WEB_THREADS = 8
WORKER_PROCESSES = 1
WORKER_THREADS = 8


@dataclass(frozen=True)
class Server:
    url: str
    pid: int

    def cpu_seconds(self) -> float:
        """CPU time used so far by the gunicorn master and its workers."""
        return process_tree_cpu_seconds(self.pid)


@dataclass
class Stack:
    data_dir: Path
    env: dict[str, str]
    config: Config
    children: dict[str, subprocess.Popen] = field(default_factory=dict)
    admin_url: str = ""  # of the PostgreSQL server, to recreate the bench database (`fresh`)

    # The process settings in force, for a scenario's report.
    web_settings = f"gunicorn gthread, {WEB_WORKERS} workers x {WEB_THREADS} threads (ops/gunicorn.conf.py)"
    worker_settings = f"dramatiq worker, {WORKER_PROCESSES} process x {WORKER_THREADS} threads"

    @contextmanager
    def serve(self, app: str, name: str = "web", ready_path: str = "/api/health",
              env: dict[str, str] | None = None) -> Iterator[Server]:
        """Run the WSGI `app` (gunicorn notation) under gunicorn until the block ends; `env` adds
        or replaces environment variables of this process only (e.g. a webhook secret)."""
        port = _free_port()
        env = dict(self.env, **(env or {}), HOST="127.0.0.1", PORT=str(port), WEB_CONCURRENCY=str(WEB_WORKERS),
                   WEB_THREADS=str(WEB_THREADS))
        child = self._spawn(name, [sys.executable, "-m", "gunicorn", app, "-c", str(GUNICORN_CONF)], env)
        server = Server(url=f"http://127.0.0.1:{port}", pid=child.pid)
        try:
            self._wait_answering(name, server.url + ready_path)
            yield server
        finally:
            self._stop(name, child)

    @contextmanager
    def worker(self, name: str = "worker", env: dict[str, str] | None = None, *, processes: int = WORKER_PROCESSES,
               threads: int = WORKER_THREADS) -> Iterator[subprocess.Popen]:
        """A Dramatiq worker on every queue (`processes` x `threads`: the bench's fixed settings
        unless a scenario runs another deployment's); the caller checks it is ready (a probe message)."""
        argv = [sys.executable, "-m", "dramatiq", "actors", "--processes", str(processes), "--threads", str(threads)]
        child = self._spawn(name, argv, dict(self.env, **(env or {})))
        try:
            yield child
        finally:
            self._stop(name, child)

    def broker(self):
        """The broker of this process, on the stack's Redis, with every actor declared."""
        import actors  # noqa: F401  (sets up the broker of the booted runtime, declares the actors)
        from actors.broker import setup_broker

        return setup_broker(self.config)

    def check_alive(self, name: str) -> None:
        child = self.children.get(name)
        if child is not None and child.poll() is not None:
            raise RuntimeError(f"{name} exited with status {child.returncode}; see {self.log_path(name)}")

    def log_path(self, name: str) -> Path:
        return self.data_dir / "logs" / f"{name}.log"

    def _spawn(self, name: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen:
        log = self.log_path(name)
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("wb") as out:
            # A session of its own: a Ctrl-C in the terminal reaches the harness, which stops it.
            child = subprocess.Popen(argv, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self.children[name] = child
        return child

    def _stop(self, name: str, child: subprocess.Popen) -> None:
        self.children.pop(name, None)
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
        try:
            child.wait(timeout=20)
        except subprocess.TimeoutExpired:
            # Its own process group (start_new_session): the hard stop reaches its workers too.
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()

    def _wait_answering(self, name: str, url: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_alive(name)
            try:
                if requests.get(url, timeout=1).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"{name} did not answer {url} within {timeout} s; see {self.log_path(name)}")

    def close(self) -> None:
        for name, child in list(self.children.items()):
            self._stop(name, child)

    def fresh(self) -> None:
        """An empty, migrated bench database (a copy of the template `open_stack` kept just after
        migrating) and an empty Redis, so that a scenario of a run finds nothing an earlier one
        left (rows with fixed ids, outbox rows, queued messages)."""
        import redis

        from backend.db import database

        self.close()
        if database.obj is not None:
            database.close_all()
        _copy_database(self.admin_url, BENCH_TEMPLATE, BENCH_DATABASE)
        redis.Redis.from_url(self.env["REDIS_URL"]).flushdb()


class StackBusy(RuntimeError):
    """Another benchmark run holds this data directory (they would drop each other's database)."""


@contextmanager
def open_stack() -> Iterator[Stack]:
    """Start (or reuse) the data services, boot this process on them, migrate; stop all at the end."""
    data_dir = Path(os.environ.get("VITRINE_DATA_DIR") or "var").resolve() / "bench"
    with _exclusive(data_dir), ExitStack() as cleanup:
        # Undone in reverse order: processes, bench database, then the servers this run started.
        admin_url, database_url, started_postgres = _postgres_urls(data_dir)
        if started_postgres:
            cleanup.callback(embedded.stop_postgres, data_dir)
        redis_url, started_redis = _redis_url(data_dir)
        if started_redis:
            cleanup.callback(embedded.stop_redis, data_dir)
        embedded.ensure_database(admin_url, BENCH_DATABASE, recreate=True)
        cleanup.callback(_release_database, admin_url)
        env = dict(os.environ, DATABASE_URL=database_url, REDIS_URL=redis_url,
                   VITRINE_DATA_DIR=str(data_dir), ENVIRONMENT="staging")
        stack = Stack(data_dir=data_dir, env=env, config=_boot_here(env, data_dir), admin_url=admin_url)
        cleanup.callback(embedded.drop_database, admin_url, BENCH_TEMPLATE)
        _copy_database(admin_url, BENCH_DATABASE, BENCH_TEMPLATE)
        cleanup.callback(stack.close)
        yield stack


@contextmanager
def _exclusive(data_dir: Path) -> Iterator[None]:
    data_dir.mkdir(parents=True, exist_ok=True)
    with (data_dir / "bench.lock").open("w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StackBusy(
                f"another `vitrine bench` is using {data_dir}; wait for it or give this run its own "
                "data directory (`vitrine --data-dir DIR bench ...`)"
            ) from None
        yield  # the lock goes with the file, even if this process is killed


def _postgres_urls(data_dir: Path) -> tuple[str, str, bool]:
    """URLs to administer the server and of the bench database; whether this run started the server."""
    if os.environ.get("DATABASE_URL"):
        admin_url = os.environ["DATABASE_URL"]
        return admin_url, urlunsplit(urlsplit(admin_url)._replace(path="/" + BENCH_DATABASE)), False
    started = not (data_dir / "postgres" / "postmaster.pid").exists()
    server = embedded.postgres_server(data_dir)
    return server.get_uri(), server.get_uri(BENCH_DATABASE), started


def _redis_url(data_dir: Path) -> tuple[str, bool]:
    """The bench Redis URL (flushed), and whether this run started the server."""
    import redis

    if os.environ.get("REDIS_URL"):
        url, started = _with_redis_db(os.environ["REDIS_URL"], BENCH_REDIS_DB), False
    else:
        started = not embedded.redis_socket(data_dir).exists()
        url = embedded.ensure_redis(data_dir)
    redis.Redis.from_url(url).flushdb()
    return url, started


def _with_redis_db(url: str, db: int) -> str:
    """`url` on logical database `db`: a path for redis(s)://, a `db` parameter for unix://."""
    parts = urlsplit(url)
    if parts.scheme == "unix":
        query = dict(parse_qsl(parts.query), db=str(db))
        return urlunsplit(parts._replace(query=urlencode(query)))
    return urlunsplit(parts._replace(path=f"/{db}"))


def _boot_here(env: dict[str, str], data_dir: Path) -> Config:
    """Boot this process on the stack's settings and migrate; its logs go to logs/bench.log."""
    from backend.db import database
    from backend.logs import configure_logging
    from backend.migrate import apply_migrations
    from backend.runtime import boot

    os.environ.update(env)
    log = data_dir / "logs" / "bench.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    # Before boot, so the boot and migration lines go to the file rather than between the figures.
    configure_logging(env.get("LOG_LEVEL", "info").lower(), stream=log.open("a", encoding="utf-8"))
    config = boot(role="bench").config
    with database.connection_context():
        apply_migrations()
    return config


def _copy_database(admin_url: str, source: str, target: str) -> None:
    """`target` recreated as a copy of `source` (a file copy: far faster than migrating again);
    this process's connections are closed first (a template must have none)."""
    import psycopg2
    from psycopg2 import sql

    from backend.db import database

    if database.obj is not None:
        database.close_all()
    embedded.drop_database(admin_url, target)
    conn = psycopg2.connect(admin_url)
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(target),
                                                                         sql.Identifier(source)))
            # What the earlier scenario wrote, and the copy itself, flushed now: a checkpoint (timed
            # every 5 min) falling inside the next scenario's measured window is not its cost.
            with suppress(psycopg2.errors.InsufficientPrivilege):  # a server of DATABASE_URL
                cur.execute("CHECKPOINT")
    finally:
        conn.close()


def _release_database(admin_url: str) -> None:
    """Close this process's connections and drop the bench database (it is recreated next run)."""
    from backend.db import database

    if database.obj is not None:
        database.close_all()
    embedded.drop_database(admin_url, BENCH_DATABASE)


def _process_table() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, user + system clock ticks) of every live process (Linux /proc)."""
    table: dict[int, tuple[int, int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:  # the process ended while the table was read
            continue
        # After the command name: state, ppid, ... utime and stime are the 12th and 13th.
        table[int(entry.name)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    return table


def process_tree(pid: int, table: dict[int, tuple[int, int]] | None = None) -> list[int]:
    """`pid` and its live descendants (a gunicorn master and its workers)."""
    table = _process_table() if table is None else table
    tree, found = [pid], []
    while tree:
        current = tree.pop()
        found.append(current)
        tree.extend(child for child, (parent, _) in table.items() if parent == current)
    return found


def process_tree_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of `pid` and its live descendants (Linux /proc).

    Unlike throughput, CPU per request hardly moves when other users load the shared machine.
    """
    table = _process_table()
    ticks = sum(table.get(member, (0, 0))[1] for member in process_tree(pid, table))
    return ticks / os.sysconf("SC_CLK_TCK")


def process_tree_peak_rss_mb(pid: int) -> float:
    """The highest resident set (VmHWM) any process of the tree has reached, in MB."""
    peak = 0
    for member in process_tree(pid):
        try:
            lines = Path(f"/proc/{member}/status").read_text().splitlines()
        except OSError:
            continue
        peak = max([peak, *(int(line.split()[1]) for line in lines if line.startswith("VmHWM:"))])
    return peak / 1024


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
