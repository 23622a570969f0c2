"""The restore drill (marker `drills`), as docs/operations.md "Backup and restore" runs it by hand.

The session's database is dumped with `pg_dump` (the embedded server's own binaries) while people
sign up and collections wait in the outbox; the dump is restored in a fresh PostgreSQL (roles
first, then `pg_restore`); the books are checked on it; the platform starts on it with a fresh
Redis. The outbox resumes what the dump had not finished (the broker's epoch in the dump names a
Redis that no longer has it: every row handed over but not done goes again), each reservation
is invoiced once, and the invoice numbers continue after the dump's last one: none is reused.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import threading
import time
import uuid
from collections import Counter

import falcon.testing
import pytest

from backend import embedded, outbox
from backend.db import database, init_database
from backend.marketplace.reservations import Review, review_reservation
from tests.billing.helpers import Market, approved_org
from tests.reliability.drill import ROOT, books_hold, kill, pg_binary, start_worker, wait_for

pytestmark = [pytest.mark.drills, pytest.mark.committed]
BILLING = ("default", "billing", "email")
RESEND_AFTER_SECONDS = 2  # the restarted platform's OUTBOX_RESEND_AFTER_SECONDS in this drill
# The work of those queues that the dump had not finished (the invoices' PDFs, on `documents`, are
# left out of the drill: rendering them is the documents tests' business, and slow).
NOT_DONE = ("SELECT count(*) FROM outbox_message WHERE done_at IS NULL AND dead_at IS NULL"
            " AND actor_name IN ('auto_collect_reservation', 'deliver_email') AND id > %s")


def _invoices() -> dict[str, str]:
    """Platform-sale invoice number by reservation."""
    rows = database.execute_sql("SELECT reservation_id, number FROM billing_invoice WHERE kind = 'platform_sale'")
    return dict(rows.fetchall())


def _invoiced_per_reservation() -> Counter:
    rows = database.execute_sql("SELECT reservation_id FROM billing_invoice WHERE kind = 'platform_sale'")
    return Counter(reservation_id for (reservation_id,) in rows.fetchall())


def _not_done(after_id: int) -> int:
    """The drill's work not done: outbox rows written after `after_id` (rows earlier tests of the
    session left are not the drill's)."""
    return database.execute_sql(NOT_DONE, (after_id,)).fetchone()[0]


def _run(*command: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.fixture
def fresh_postgres():
    """(url of an empty database on a PostgreSQL of the drill's own, its admin url); the session's
    database comes back afterwards."""
    data_dir = ROOT / "var" / "test" / f"restore-pg-{uuid.uuid4().hex[:8]}"
    try:
        url = embedded.ensure_postgres(data_dir, "restored")
        yield url, embedded.postgres_server(data_dir).get_uri()
    finally:
        embedded.stop_postgres(data_dir)
        shutil.rmtree(data_dir, ignore_errors=True)


def test_a_dump_taken_mid_activity_restores_and_the_platform_resumes_it(epoch, broker, make_app, fresh_postgres,
                                                                         config, tmp_path):
    restored_url, restored_admin = fresh_postgres
    # Dumps are the owner's: the runtime role may not read the roles.
    source_url = config.database_owner_url or config.database_url
    dump = tmp_path / "vitrine.dump"
    with database.connection_context():
        first = database.execute_sql("SELECT coalesce(max(id), 0) FROM outbox_message").fetchone()[0]
        industrial, distributor, market = approved_org("industrial"), approved_org("distributor"), Market()
        reservations = [market.reservation(industrial, distributor, day=n, approve=False).id for n in range(7)]

        def approve(ids: list[str]) -> None:
            for reservation_id in ids:
                review_reservation(reservation_id=reservation_id, distributor_organization_id=distributor.id,
                                   decision=Review.APPROVED)

        worker = start_worker(tmp_path, modules=("actors",), queues=BILLING)
        try:
            approve(reservations[:3])
            wait_for(lambda: len(_invoices()) == 3, timeout=60)
        finally:
            kill(worker, signal.SIGTERM)
        approve(reservations[3:6])  # handed over to Redis, never done before the dump
        assert outbox.flush()
        before = _invoices()

    # The dump, while people sign up (a consistent snapshot: what commits during it is not in it).
    client = falcon.testing.TestClient(make_app(trusted_proxy_count=1))
    dumping, signed_up = threading.Event(), []

    def sign_ups() -> None:
        with database.connection_context():
            while not dumping.is_set():
                n = len(signed_up)
                answer = client.simulate_post("/api/auth/sign-up", headers={"X-Forwarded-For": f"10.36.0.{n + 1}"},
                                              json={"email": f"restore-{n}@example.com", "name": f"Restore {n}",
                                                    "password": "a long drill password"})
                assert answer.status_code == 201, answer.text
                signed_up.append(n)

    activity = threading.Thread(target=sign_ups)
    activity.start()
    wait_for(lambda: len(signed_up) >= 3, timeout=60)
    started = time.monotonic()
    try:
        _run(str(pg_binary("pg_dump")), "--format=custom", "--file", str(dump), source_url)
    finally:
        dumping.set()
        activity.join(60)
    dumped_in = time.monotonic() - started

    # The restore: roles first (ignore the ones the new server has), then the database.
    roles = subprocess.run([str(pg_binary("pg_dumpall")), "--roles-only", "--dbname", source_url],
                           capture_output=True, text=True, timeout=120, check=True).stdout
    subprocess.run([str(pg_binary("psql")), "--quiet", restored_admin], input=roles, capture_output=True, text=True,
                   timeout=120, check=True)
    _run(str(pg_binary("pg_restore")), "--exit-on-error", "--dbname", restored_url, str(dump))
    restored_in = time.monotonic() - started - dumped_in

    session_db = database.obj
    pool = init_database(restored_url, max_connections=8)
    broker.client.flushall()  # the platform starts again with a Redis of its own: empty
    try:
        with database.connection_context():
            books_hold(database)
            assert _invoices() == before
            waiting = _not_done(first)
            worker = start_worker(tmp_path, modules=("actors",), queues=BILLING, env={"DATABASE_URL": restored_url})
            try:
                # The clock's outbox sweeper, as the restarted platform runs it: a row whose after-commit
                # send had not happened when the dump was taken is unsent in the restored database, and
                # only the sweeper hands it over (`OUTBOX_RESEND_AFTER_SECONDS`, short here: 2 s).
                def resumed_all() -> bool:
                    outbox.sweep(older_than_seconds=RESEND_AFTER_SECONDS)
                    return len(_invoices()) == 6 and _not_done(first) == 0

                resumed = wait_for(resumed_all, timeout=90)
                approve(reservations[6:])  # the platform at work again on the restored database
                wait_for(lambda: len(_invoices()) == 7, timeout=60)
            finally:
                kill(worker, signal.SIGTERM)
            after = _invoices()
            invoiced = _invoiced_per_reservation()
            losses = database.execute_sql("SELECT reason, redelivered FROM outbox_broker_loss").fetchall()
            books_hold(database)
    finally:
        pool.close_all()
        database.initialize(session_db)
        broker.client.delete(f"{broker.namespace}:vitrine-epoch")
    print(f"restore drill: dump {dumped_in:.1f} s during {len(signed_up)} sign-ups, restore {restored_in:.1f} s; "
          f"{waiting} outbox rows not done in the dump, all done {resumed:.1f} s after the platform started; "
          f"losses found {losses}")
    assert set(invoiced) == set(reservations) and set(invoiced.values()) == {1}
    new_numbers = [number for reservation, number in after.items() if reservation not in before]
    assert len(set(after.values())) == 7 and min(new_numbers) > max(before.values())  # no number reused
    assert [reason for reason, _ in losses] == ["marker_missing"]
