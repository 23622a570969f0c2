"""E-mail: queued with the change through the outbox, delivered by the `deliver_email` actor by
SMTP or as `.eml` files, French templates naming the platform, retried on failure."""

from __future__ import annotations

import smtplib
from dataclasses import replace
from email import message_from_bytes, policy
from pathlib import Path

import pytest

from actors.email import deliver_email as deliver_email_actor
from backend.db import database
from backend.email.messages import EmailMessage, EmailNotSent, deliver_email, queue_email
from backend.outbox import OutboxMessage
from tests.factories import make_user, signed_in


def _eml(config, message_id: str) -> Path:
    (path,) = (Path(config.data_dir) / "mail").glob(f"*-{message_id}.eml")
    return path


def test_queue_email_records_the_message_and_its_outbox_row():
    message = queue_email("smoke_test", to="ops@example.com", requester="admin@example.com")
    assert message.subject == "Test d'envoi d'e-mail Vitrine"
    assert "L'équipe Vitrine" in message.body_text
    row = OutboxMessage.get(OutboxMessage.actor_name == "deliver_email")
    assert row.args == [message.id]


def test_without_smtp_the_message_is_written_as_an_eml_file_once(config):
    message = queue_email("smoke_test", to="ops@example.com", requester="admin@example.com")
    assert deliver_email(message.id, config=config) is True
    parsed = message_from_bytes(_eml(config, message.id).read_bytes(), policy=policy.default)
    assert parsed["To"] == "ops@example.com" and parsed["Subject"] == "Test d'envoi d'e-mail Vitrine"
    assert "l'envoi d'e-mails fonctionne" in parsed.get_content()
    stored = EmailMessage.get_by_id(message.id)
    assert (stored.status, stored.body_text, stored.attempts) == ("sent", None, 1)
    assert deliver_email(message.id, config=config) is False  # a redelivered message is not sent twice


def test_an_eml_file_keeps_links_whole_and_text_readable(config):
    link = "http://127.0.0.1:8000/verify-email?token=" + "T0k-en_" * 8
    message = queue_email("email_verification", to="ines@example.com", name="Inès Martin", link=link)
    deliver_email(message.id, config=config)
    text = _eml(config, message.id).read_text(encoding="utf-8")
    assert link in text.splitlines()  # on a line of its own, not cut by quoted-printable
    assert "Bonjour Inès Martin" in text


class FakeSMTP:
    sent: list = []
    fail = False

    def __init__(self, host, port, timeout):
        self.host, self.port, self.logged_in = host, port, None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def ehlo(self):
        pass

    def has_extn(self, name):
        return name == "starttls"

    def starttls(self, context):
        pass

    def login(self, user, password):
        self.logged_in = (user, password)

    def send_message(self, mime):
        if FakeSMTP.fail:
            raise smtplib.SMTPServerDisconnected("connection lost")
        FakeSMTP.sent.append((self.host, self.port, self.logged_in, mime["To"]))


@pytest.fixture
def fake_smtp(monkeypatch):
    FakeSMTP.sent, FakeSMTP.fail = [], False
    monkeypatch.setattr(smtplib, "SMTP", FakeSMTP)
    return FakeSMTP


def test_with_smtp_url_the_message_goes_to_the_server(config, fake_smtp):
    smtp = replace(config, smtp_url="smtp://mailer:p%40ss@mail.example:2525")
    message = queue_email("smoke_test", to="ops@example.com", requester="admin@example.com")
    deliver_email(message.id, config=smtp)
    assert fake_smtp.sent == [("mail.example", 2525, ("mailer", "p@ss"), "ops@example.com")]


def test_a_failed_send_is_counted_kept_and_raised_for_a_retry(config, fake_smtp):
    fake_smtp.fail = True
    smtp = replace(config, smtp_url="smtp://mail.example")
    message = queue_email("smoke_test", to="ops@example.com", requester="admin@example.com")
    with pytest.raises(EmailNotSent):
        deliver_email(message.id, config=smtp)
    stored = EmailMessage.get_by_id(message.id)
    assert (stored.status, stored.attempts) == ("queued", 1)
    assert "connection lost" in stored.last_error and stored.body_text
    fake_smtp.fail = False
    assert deliver_email(message.id, config=smtp) is True
    assert EmailMessage.get_by_id(message.id).attempts == 2


def test_the_actor_retries_on_the_email_queue():
    assert deliver_email_actor.queue_name == "email"
    assert deliver_email_actor.options["max_retries"] == 8 and deliver_email_actor.options["throws"] == ()


def test_email_smoke_needs_platform_manage_and_queues_a_message(client):
    admin = make_user(roles=["admin"])
    answer = client.simulate_post("/api/notifications/email-smoke", json={"to": "ops@example.com"},
                                  headers=signed_in(admin))
    assert answer.status_code == 200 and answer.json["data"]["to"] == "ops@example.com"
    assert EmailMessage.get_by_id(answer.json["data"]["emailId"]).template == "smoke_test"
    default = client.simulate_post("/api/notifications/email-smoke", headers=signed_in(admin))
    assert default.json["data"]["to"] == admin.email
    industrial = make_user(roles=["industrial"])
    refused = client.simulate_post("/api/notifications/email-smoke", headers=signed_in(industrial))
    assert refused.status_code == 403


@pytest.mark.committed
def test_a_sign_up_email_is_delivered_by_the_worker_after_commit(client, config, broker, worker):
    answer = client.simulate_post("/api/auth/sign-up",
                                  json={"email": "worker@example.com", "password": "un-mot-de-passe", "name": "W"})
    assert answer.status_code == 201
    broker.join("email", timeout=10_000)
    worker.join()
    with database.connection_context():
        message = EmailMessage.get(EmailMessage.to_address == "worker@example.com")
        assert message.status == "sent"
    text = _eml(config, message.id).read_text()
    assert "Confirmez votre adresse e-mail sur Vitrine" in text
