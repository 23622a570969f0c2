"""Behind PgBouncer in transaction pooling mode (how a PaaS PostgreSQL is often reached) the
platform works: every transaction may run on another server connection, so nothing may rely on
a session's state (no prepared statement, no session setting). The outbox (insert, hand-over,
the worker's done mark) and a collection run through a PgBouncer started in front of the test
PostgreSQL with a pool of two server connections."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import time
from pathlib import Path

import dramatiq
import pytest
from psycopg2.extensions import parse_dsn

from backend import outbox
from backend.db import database, init_database, transaction

PGBOUNCER = shutil.which("pgbouncer") or next(
    (path for path in ("/usr/sbin/pgbouncer", "/usr/local/bin/pgbouncer") if os.access(path, os.X_OK)), None)

pytestmark = [
    pytest.mark.committed,
    pytest.mark.skipif(PGBOUNCER is None, reason="the pgbouncer binary is not installed (Debian: apt-get install "
                                                 "pgbouncer); docs/operations.md says how this was tested"),
]


@dramatiq.actor(queue_name="default", max_retries=0, time_limit=10_000, throws=())
def pgbouncer_probe(token: str) -> None:
    database.execute_sql("SELECT %s", (token,))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def through_pgbouncer(tmp_path):
    """The process's database proxy pointed at a PgBouncer (transaction mode) for the test."""
    server = parse_dsn(os.environ["DATABASE_URL"])
    host = server.get("host", "127.0.0.1")
    keys = ("host", "port", "dbname", "user", "password")
    entry = " ".join(f"{key}={server[key]}" for key in keys if server.get(key))
    port = _free_port()
    (tmp_path / "pgbouncer.ini").write_text(
        f"[databases]\nvitrine = {entry}\n"
        f"[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
        "auth_type = any\npool_mode = transaction\ndefault_pool_size = 2\nmax_client_conn = 100\n"
        "ignore_startup_parameters = extra_float_digits\n")
    tmp_path.chmod(0o755)
    (tmp_path / "pgbouncer.ini").chmod(0o644)
    command = [PGBOUNCER, str(tmp_path / "pgbouncer.ini")]
    if os.geteuid() == 0:  # PgBouncer refuses to run as root: as the user owning the server's socket
        owner = Path(host).stat().st_uid if host.startswith("/") else pwd.getpwnam("nobody").pw_uid
        command[1:1] = ["-u", pwd.getpwuid(owner).pw_name]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"pgbouncer did not start: {process.stdout.read().decode()}") from None
                time.sleep(0.05)  # waits for a process to listen, not for a behaviour under test
        runtime = database.obj
        pool = init_database(f"postgresql://{server.get('user')}@127.0.0.1:{port}/vitrine", max_connections=8)
        try:
            yield
        finally:
            pool.close_all()
            database.initialize(runtime)
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_outbox_works_through_pgbouncer_in_transaction_mode(through_pgbouncer, broker, worker):
    with database.connection_context():
        with transaction():
            rows = [outbox.enqueue("pgbouncer_probe", f"token-{n}") for n in range(20)]
        assert outbox.flush()
        broker.join("default", timeout=30_000)
        worker.join()
        stored = list(outbox.OutboxMessage.select().where(outbox.OutboxMessage.id.in_([row.id for row in rows])))
    assert len(stored) == 20
    assert all(row.sent_at is not None and row.done_at is not None and row.attempts == 1 for row in stored)


def test_a_collection_works_through_pgbouncer_in_transaction_mode(through_pgbouncer):
    from backend.billing.collection import collect as collection
    from backend.billing.models import PaymentMethod
    from tests.billing.helpers import Market, approved_org, booted_config

    with database.connection_context():
        industrial, distributor = approved_org("industrial"), approved_org("distributor")
        reservation = Market().reservation(industrial, distributor, price_cents=100_000)
        arguments = dict(reservation_id=reservation.id, industrial_organization_id=industrial.id,
                         method=PaymentMethod.BANK_TRANSFER, key="pgbouncer-1", user_id=None, config=booted_config())
        answer = collection.collect(**arguments)
        again = collection.collect(**arguments)
    assert answer.financial_status == "reservation_total_paid" and answer.idempotent is False
    assert again.idempotent is True and again.invoice_number == answer.invoice_number
