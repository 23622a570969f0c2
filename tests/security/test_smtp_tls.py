"""Credentials and links never go to an SMTP server in clear text: STARTTLS for `smtp://`,
implicit TLS for `smtps://`, plain text only to a loopback relay."""

from __future__ import annotations

import smtplib
from dataclasses import replace

import pytest

from backend.config import ConfigError, load_config
from backend.email.messages import EmailMessage, EmailNotSent, deliver_email, queue_email


class Server:
    """Stands in for the SMTP server (outside the process): records what the client did."""

    offers_starttls = False
    made: list = []

    def __init__(self, host, port, timeout=None, context=None):
        self.host, self.port, self.events = host, port, []
        Server.made.append(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def ehlo(self):
        self.events.append("ehlo")

    def has_extn(self, name):
        return name == "starttls" and Server.offers_starttls

    def starttls(self, context):
        assert context is not None and context.verify_mode.name == "CERT_REQUIRED"
        self.events.append("starttls")

    def login(self, user, password):
        self.events.append("login")

    def send_message(self, mime):
        self.events.append("send")


@pytest.fixture
def server(monkeypatch):
    Server.made, Server.offers_starttls = [], False
    monkeypatch.setattr(smtplib, "SMTP", Server)
    monkeypatch.setattr(smtplib, "SMTP_SSL", Server)
    return Server


def _deliver(config, url):
    message = queue_email("smoke_test", to="ops@example.com", requester="admin@example.com")
    return message, lambda: deliver_email(message.id, config=replace(config, smtp_url=url))


def test_smtp_without_starttls_to_a_remote_host_sends_nothing(config, server):
    message, deliver = _deliver(config, "smtp://mailer:secret@mail.example:587")
    with pytest.raises(EmailNotSent):
        deliver()
    assert server.made[0].events == ["ehlo"]  # no login, no message
    row = EmailMessage.get_by_id(message.id)
    assert row.status == "queued" and "STARTTLS" in row.last_error and "secret" not in row.last_error


def test_smtp_with_starttls_upgrades_before_logging_in(config, server):
    server.offers_starttls = True
    _, deliver = _deliver(config, "smtp://mailer:secret@mail.example:587")
    assert deliver() is True
    assert server.made[0].events == ["ehlo", "starttls", "ehlo", "login", "send"]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]"])
def test_plain_smtp_only_to_a_loopback_relay(config, server, host):
    _, deliver = _deliver(config, f"smtp://{host}:1025")
    assert deliver() is True
    assert server.made[0].events == ["ehlo", "send"]


def test_smtps_is_implicit_tls(config, server):
    _, deliver = _deliver(config, "smtps://mailer:secret@mail.example")
    assert deliver() is True
    assert server.made[0].port == 465 and "starttls" not in server.made[0].events


def test_an_smtp_url_of_another_scheme_stops_boot():
    with pytest.raises(ConfigError) as refused:
        load_config({"SMTP_URL": "http://user:hunter2@mail.example"})
    assert "hunter2" not in str(refused.value)
