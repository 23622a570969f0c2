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
from backend.db import database
from backend.email.messages import EmailMessage
from tests.printing.conftest import group, member, printer, sent_batch, setting  # noqa: F401  (fixtures)
from tests.reliability import drill_actors  # noqa: F401  (declares drill_work in this process)
from tests.reliability.drill import books_hold, kill, signal_worker, start_worker, wait_for

pytestmark = [pytest.mark.drills, pytest.mark.committed]
BOUND_S = 90  # every piece of work done within this, from the loss


@pytest.fixture
def epoch(broker):
    """The broker's epoch as a running platform has it: written in Redis and PostgreSQL (the
    committed tests before this one truncated the table)."""
    with database.connection_context():
        database.execute_sql("TRUNCATE outbox_broker_epoch, outbox_broker_loss")
        broker.client.delete(f"{broker.namespace}:vitrine-epoch")
        check_epoch()
        assert database.execute_sql("SELECT count(*) FROM outbox_broker_epoch").fetchone()[0] == 1
        yield


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
