"""Exactly once where it shows: two copies of one `deliver_email` message running at the same time
(a re-send after Redis lost data, whose first copy was running) send the e-mail once. The second
copy waits on the row's claim for the first one's outcome: sent, it changes nothing; failed, it
sends the message itself (it never reports done a message nobody sent)."""

from __future__ import annotations

import smtplib
import threading
import time
from dataclasses import replace

import pytest

from backend.db import database
from backend.email.messages import EmailMessage, EmailNotSent, deliver_email, queue_email
from tests.identity.test_email import FakeSMTP

pytestmark = pytest.mark.committed


class GatedSMTP(FakeSMTP):
    """The SMTP server (outside the process): the first send waits at a gate, so a second copy
    of the message starts while the first one holds its claim; each accepted send is counted."""

    sent: list = []
    reached, gate = threading.Event(), threading.Event()
    refuse_first = False

    def send_message(self, mime):
        if not GatedSMTP.reached.is_set():  # the first copy, holding the claim
            GatedSMTP.reached.set()
            assert GatedSMTP.gate.wait(30), "the second copy never started"
            if GatedSMTP.refuse_first:
                raise smtplib.SMTPServerDisconnected("connection lost")
        GatedSMTP.sent.append(mime["To"])


@pytest.fixture
def smtp(monkeypatch, config):
    GatedSMTP.sent, GatedSMTP.refuse_first = [], False
    GatedSMTP.reached, GatedSMTP.gate = threading.Event(), threading.Event()
    monkeypatch.setattr(smtplib, "SMTP", GatedSMTP)
    return replace(config, smtp_url="smtp://127.0.0.1:1025")  # a loopback relay: plain SMTP allowed


def _waiting_on_a_lock() -> int:
    with database.connection_context():
        return database.execute_sql(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchone()[0]


def _two_copies(message_id: str, config) -> list:
    outcomes: list = [None, None]

    def copy(n: int) -> None:
        with database.connection_context():
            try:
                outcomes[n] = deliver_email(message_id, config=config)
            except EmailNotSent as exc:
                outcomes[n] = exc

    first = threading.Thread(target=copy, args=(0,))
    first.start()
    assert GatedSMTP.reached.wait(30), "the first copy never reached the server"
    second = threading.Thread(target=copy, args=(1,))
    second.start()
    deadline = time.monotonic() + 30
    while not _waiting_on_a_lock():  # the second copy waits for the first one's claim
        assert time.monotonic() < deadline, "the second copy did not wait on the claim"
        time.sleep(0.02)
    GatedSMTP.gate.set()
    first.join(30)
    second.join(30)
    return outcomes


def _queued() -> str:
    with database.connection_context():
        return queue_email("smoke_test", to="ops@example.com", requester="admin@example.com").id


def test_two_copies_at_once_send_the_e_mail_once(smtp):
    message_id = _queued()
    assert _two_copies(message_id, smtp) == [True, False]
    assert GatedSMTP.sent == ["ops@example.com"]
    with database.connection_context():
        stored = EmailMessage.get_by_id(message_id)
    assert (stored.status, stored.attempts) == ("sent", 1)


def test_when_the_first_copy_fails_the_second_sends_it(smtp):
    GatedSMTP.refuse_first = True
    message_id = _queued()
    first, second = _two_copies(message_id, smtp)
    assert isinstance(first, EmailNotSent) and second is True
    assert GatedSMTP.sent == ["ops@example.com"]
    with database.connection_context():
        stored = EmailMessage.get_by_id(message_id)
    assert (stored.status, stored.attempts) == ("sent", 2)
