"""Redis losing its data under load (marker `drills`): a real worker process (`vitrine worker`'s
actors) against the session's PostgreSQL and its own Redis, which the drill flushes or restarts.

The worker is frozen (SIGSTOP) across the loss, so the messages queued at that moment are lost for
certain, and the messages it had already taken are finished after it (their re-sent copies then
change nothing). The worker's maintenance pass (every 5 s) finds the epoch marker gone and hands
every outbox row handed over but not done again at once; the regular `redeliver_at` (600 s) never
comes into it. Each drill prints its figures (time to recover, rows re-sent, duplicates) and ends
with `books_hold`; docs/operations.md "Redis losing its data" keeps them.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from collections import Counter
from pathlib import Path

import falcon.testing
import pytest

from actors.broker import check_epoch
from backend import outbox
from backend.db import database, transaction
from backend.email.messages import EmailMessage
from backend.marketplace.reservations import Review, review_reservation
from backend.printing.models import PrintOrder, PrintOrderBatch, PrintOrderStatusChange
from tests.billing.helpers import Market, approved_org
from tests.reliability import drill_actors  # noqa: F401  (declares drill_work in this process)
from tests.reliability.drill import books_hold, kill, restart_redis, signal_worker, start_worker, wait_for
from tests.reliability.drill_actors import DONE

pytestmark = [pytest.mark.drills, pytest.mark.committed]
BOUND_S = 90  # every piece of work done within this, from the loss


def _losses() -> list[tuple]:
    return database.execute_sql("SELECT reason, redelivered, unsent_resent FROM outbox_broker_loss").fetchall()


def _sign_up(client, n: int) -> None:
    answer = client.simulate_post("/api/auth/sign-up", headers={"X-Forwarded-For": f"10.35.0.{n + 1}"},
                                  json={"email": f"drill-{n}@example.com", "password": "a long drill password",
                                        "name": f"Drill {n}"})
    assert answer.status_code == 201, answer.text


def _verification_mails() -> list[EmailMessage]:
    return list(EmailMessage.select().where(EmailMessage.template == "email_verification",
                                            EmailMessage.to_address.startswith("drill-")))


def _sends_logged(log: Path) -> Counter:
    """How many times the worker logged each e-mail as sent (one line per send)."""
    lines = (json.loads(line) for line in log.read_text().splitlines() if line.startswith("{"))
    return Counter(line["emailId"] for line in lines if line.get("message") == "e-mail sent")


def test_redis_flushed_under_60_sign_ups_sends_each_e_mail_exactly_once(epoch, broker, make_app, tmp_path):
    client = falcon.testing.TestClient(make_app(trusted_proxy_count=1))  # one address per person signing up
    worker = start_worker(tmp_path, modules=("actors",), queues=("email", "default"))
    try:
        with database.connection_context():
            for n in range(20):
                _sign_up(client, n)
            wait_for(lambda: sum(m.status == "sent" for m in _verification_mails()) == 20, timeout=60)
            signal_worker(worker, signal.SIGSTOP)
            for n in range(20, 40):
                _sign_up(client, n)
            assert outbox.flush()  # 20 e-mails queued in Redis
            flushed_at: list[float] = []
            flush = threading.Thread(target=lambda: (time.sleep(0.1), broker.client.flushall(),
                                                     flushed_at.append(time.monotonic())))
            flush.start()  # FLUSHALL while people are still signing up
            for n in range(40, 60):
                _sign_up(client, n)
            flush.join()
            signal_worker(worker, signal.SIGCONT)
            wait_for(lambda: sum(m.status == "sent" for m in _verification_mails()) == 60, timeout=BOUND_S)
            recovery = time.monotonic() - flushed_at[0]
            mails = _verification_mails()
            losses = _losses()
            books_hold(database)
    finally:
        kill(worker, signal.SIGTERM)
    sends = _sends_logged(tmp_path / "worker.log")
    duplicates = sum(count - 1 for count in sends.values())
    print(f"FLUSHALL under 60 sign-ups: all 60 e-mails sent {recovery:.1f} s after the flush; "
          f"losses found {losses}; duplicates {duplicates}")
    assert len(mails) == 60 and {m.attempts for m in mails} == {1}
    assert sends == Counter({m.id: 1 for m in mails})  # each e-mail sent once, none twice
    (reason, redelivered, _), = losses
    assert reason == "marker_missing" and redelivered >= 20
    assert recovery < BOUND_S


def _advanced_once(batch_code: str) -> tuple[int, int]:
    """(orders of the batch now `sent`, status changes to `sent` beyond one per order)."""
    batch = PrintOrderBatch.get(PrintOrderBatch.code == batch_code)
    orders = PrintOrder.select(PrintOrder.id).where(PrintOrder.batch_id == batch.id)
    sent = PrintOrder.select().where(PrintOrder.batch_id == batch.id, PrintOrder.status == "sent").count()
    changes = Counter(change.order_id for change in PrintOrderStatusChange.select(PrintOrderStatusChange.order_id)
                      .where(PrintOrderStatusChange.order_id.in_(orders), PrintOrderStatusChange.to_status == "sent"))
    return sent, sum(count - 1 for count in changes.values())


def _invoiced(reservation_ids: list[str]) -> Counter:
    """Platform-sale invoices per reservation (the collection's invoice)."""
    rows = database.execute_sql("SELECT reservation_id FROM billing_invoice WHERE kind = 'platform_sale'"
                                " AND reservation_id = ANY(%s)", (reservation_ids,)).fetchall()
    return Counter(reservation_id for (reservation_id,) in rows)


def test_redis_restarted_without_persistence_under_a_batch_advance_and_collections(
        epoch, broker, own_redis, make_app, setting, sent_batch, printer, tmp_path):
    with database.connection_context():
        code = sent_batch(200)
        industrial, distributor, market = approved_org("industrial"), approved_org("distributor"), Market()
        reservations = [market.reservation(industrial, distributor, day=n, approve=False).id for n in range(50)]

        def approve(ids: list[str]) -> None:  # each approval hands an auto-collection to Redis
            for reservation_id in ids:
                review_reservation(reservation_id=reservation_id, distributor_organization_id=distributor.id,
                                   decision=Review.APPROVED)

        worker = start_worker(tmp_path, modules=("actors",), queues=("default", "printing", "billing"))
        try:
            waiting = falcon.testing.TestClient(make_app(batch_advance_wait_seconds=0))
            advance = waiting.simulate_patch(f"/api/printer/print-batches/{code}/status", headers=printer,
                                             json={"nextStatus": "sent"})
            assert advance.status_code == 202, advance.text
            approve(reservations[:25])
            wait_for(lambda: _advanced_once(code)[0] >= 20 and sum(_invoiced(reservations).values()) >= 5,
                     timeout=60)
            signal_worker(worker, signal.SIGSTOP)  # what is queued from now on is lost with Redis
            approve(reservations[25:])
            assert outbox.flush()
            at_loss = (_advanced_once(code)[0], sum(_invoiced(reservations).values()))
            restart_redis(own_redis, keep_data=False)
            restarted_at = time.monotonic()
            signal_worker(worker, signal.SIGCONT)
            recovery = wait_for(lambda: _advanced_once(code)[0] == 200 and len(_invoiced(reservations)) == 50
                                and _losses(), timeout=BOUND_S)
            sent, advanced_twice = _advanced_once(code)
            invoiced = _invoiced(reservations)
            losses = _losses()
            books_hold(database)
        finally:
            kill(worker, signal.SIGTERM)
    print(f"Redis restarted without persistence under a 200-order advance and 50 collections: at the loss "
          f"{at_loss[0]} orders advanced and {at_loss[1]} invoiced; all done {recovery:.1f} s after the restart; "
          f"losses found {losses}; orders advanced twice {advanced_twice}, reservations invoiced twice "
          f"{sum(n - 1 for n in invoiced.values())}")
    assert sent == 200 and advanced_twice == 0
    assert set(invoiced) == set(reservations) and set(invoiced.values()) == {1}
    (reason, redelivered, _), = losses
    assert reason == "marker_missing" and redelivered >= 25
    assert time.monotonic() - restarted_at < BOUND_S


def test_a_redis_restarted_with_its_data_intact_re_sends_nothing(epoch, broker, own_redis, drill_table, tmp_path):
    tokens = [f"intact-{n}" for n in range(30)]
    with database.connection_context():
        with transaction():
            for token in tokens:
                outbox.enqueue("drill_work", token, 0)
        assert outbox.flush()  # 30 messages queued, no worker yet
        restart_redis(own_redis, keep_data=True)  # saved, then reloaded from its append-only file
        assert broker.client.hlen(f"{broker.namespace}:default.msgs") == 30
        check_epoch()  # this process's connection is back: same epoch, another run id, data intact
        worker = start_worker(tmp_path)
        try:
            recovery = wait_for(lambda: outbox.backlog()["notDone"] == 0, timeout=60)
        finally:
            kill(worker, signal.SIGTERM)
        runs = dict(database.execute_sql(DONE).fetchall())
        attempts = {n for (n,) in database.execute_sql("SELECT attempts FROM outbox_message").fetchall()}
        losses = _losses()
    print(f"Redis restarted with its data: 30 queued messages done {recovery:.1f} s after the worker started, "
          f"losses found {losses}, re-sent {sum(attempts) - 1 if attempts else 0}")
    assert losses == [] and attempts == {1}  # no row handed over a second time
    assert runs == dict.fromkeys(tokens, 1)
