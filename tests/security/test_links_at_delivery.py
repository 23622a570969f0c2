"""A single-use link exists only in the e-mail that delivers it (issue 34 point 12): a queued
message, its outbox row and the broker's copy hold no token, nor does any token row hold a digest;
the deliver actor mints the token as it sends, a failed send rolls it back, and a message sent again
mints again (only its last link works)."""

from __future__ import annotations

import re
import smtplib
from dataclasses import replace
from datetime import timedelta

import pytest

from actors.email import deliver_email as deliver_email_actor
from backend import clock, outbox
from backend.db import database, transaction
from backend.email.messages import EmailMessage, EmailNotSent, deliver_email
from backend.identity.links import mint_link
from backend.identity.models import AuthToken, Invitation
from backend.identity.secrets import token_digest
from tests.factories import DEFAULT_PASSWORD, add_member, make_organization, make_user, signed_in
from tests.identity.helpers import TOKEN_IN_LINK, browser_of, cookie_header, cookie_of, delivered_text, last_email
from tests.identity.test_email import FakeSMTP

TOKEN_LIKE = re.compile(rb"[A-Za-z0-9_-]{40,}")  # a token is 43 URL-safe characters
VERIFY = "/api/auth/magic-link/verify"


def _verifying(raw: bytes) -> list[bytes]:
    """Every string in `raw` that verifies as an e-mailed token (its digest is a token row's)."""
    digests = {row[0] for row in database.execute_sql(
        "SELECT token_hash FROM auth_token WHERE token_hash IS NOT NULL"
        " UNION SELECT token_hash FROM invitation WHERE token_hash IS NOT NULL")}
    return [found for found in TOKEN_LIKE.findall(raw) if token_digest(found.decode()) in digests]


def _rows_as_text() -> bytes:
    tables = ("email_message", "outbox_message", "auth_token", "invitation")
    return b"\n".join(
        str(row[0]).encode() for table in tables
        for row in database.execute_sql(f"SELECT row_to_json(t)::text FROM {table} t"))  # noqa: S608 (fixed names)


def _broker_dump(client) -> bytes:
    """Every value in the broker's Redis, whatever its type."""
    readers = {b"string": client.get, b"list": lambda key: client.lrange(key, 0, -1), b"hash": client.hgetall,
               b"set": client.smembers, b"zset": lambda key: client.zrange(key, 0, -1)}
    return b"\n".join(repr(readers[client.type(key)](key)).encode() for key in client.scan_iter())


@pytest.mark.committed
def test_a_queued_link_holds_no_usable_token_in_the_database_or_the_broker(client, broker):
    invitee = make_user(email="invitee@example.com")
    manager, organization = make_user(), make_organization()
    add_member(manager, organization)
    signed_up = client.simulate_post("/api/auth/sign-up", json={"email": "queued@example.com",
                                                                 "password": "un long mot de passe", "name": "Q"})
    browser = browser_of(client.simulate_post("/api/auth/magic-link", json={"email": invitee.email}))
    client.simulate_post("/api/auth/password-reset", json={"email": invitee.email})
    client.simulate_post(f"/api/organizations/{organization.id}/invitations", headers=signed_in(manager),
                         json={"email": invitee.email, "role": "member"})
    assert outbox.flush()
    queued = list(EmailMessage.select().order_by(EmailMessage.created_at))
    assert [m.template for m in queued] == ["email_verification", "magic_link", "password_reset", "invitation"]
    assert len(broker.client.hgetall("dramatiq:email.msgs")) == 4  # the broker's copies, waiting
    raw = _rows_as_text() + _broker_dump(broker.client)
    assert _verifying(raw) == []
    assert all(m.link_kind and f"[lien {m.id}]" in m.body_text for m in queued)
    assert AuthToken.select().where(AuthToken.token_hash.is_null(False)).count() == 0
    assert Invitation.select().where(Invitation.token_hash.is_null(False)).count() == 0

    for message in queued:  # the actor itself (its minter wired), as the worker runs it
        deliver_email_actor.fn(message.id)
    texts = {m.template: delivered_text(m) for m in queued}
    assert len(_verifying("\n".join(texts.values()).encode())) == 4  # the same search finds delivered ones
    assert _verifying(_rows_as_text()) == []  # and still none in the rows: the digests only
    token = {template: TOKEN_IN_LINK.search(text).group(1) for template, text in texts.items()}
    assert client.simulate_post("/api/auth/email-verification/confirm", json={"token": token["email_verification"]},
                                headers=cookie_header(cookie_of(signed_up))).status_code == 200
    assert client.simulate_get(VERIFY, params={"token": token["magic_link"]}, headers=browser).status_code == 200
    assert client.simulate_post("/api/auth/password-reset/confirm",
                                json={"token": token["password_reset"], "newPassword": "nouveau-mot-de-passe"}
                                ).status_code == 200
    assert client.simulate_post(f"/api/invitations/{token['invitation']}/accept",
                                headers=signed_in(invitee)).status_code == 200


def test_a_message_sent_again_mints_a_new_token_and_only_the_last_link_works(client, config):
    """The worker sent the e-mail and died before its commit: the message is sent again."""
    user = make_user()
    browser = browser_of(client.simulate_post("/api/auth/magic-link", json={"email": user.email}))
    message = last_email(user.email, "magic_link")
    with pytest.raises(ZeroDivisionError), transaction():
        first = delivered_text(message)
        1 / 0  # the crash: the delivery's transaction never commits  # noqa: B018
    assert EmailMessage.get_by_id(message.id).status == "queued"
    second = delivered_text(message)
    old, new = (TOKEN_IN_LINK.search(text).group(1) for text in (first, second))
    assert old != new
    assert client.simulate_get(VERIFY, params={"token": old}, headers=browser).status_code == 400
    assert client.simulate_get(VERIFY, params={"token": new}).status_code == 400  # still bound to its browser
    assert client.simulate_get(VERIFY, params={"token": new}, headers=browser).status_code == 200


class _DroppingServer(FakeSMTP):
    """Takes the message, then the connection drops before the answer: the sender counts a failure."""

    taken: list = []

    def send_message(self, mime):
        _DroppingServer.taken.append(mime.get_content())
        raise smtplib.SMTPServerDisconnected("connection lost")


def test_a_failed_smtp_send_leaves_no_usable_token(client, config, monkeypatch):
    monkeypatch.setattr(smtplib, "SMTP", _DroppingServer)
    _DroppingServer.taken = []
    user = make_user()
    client.simulate_post("/api/auth/password-reset", json={"email": user.email})
    message = last_email(user.email, "password_reset")
    with pytest.raises(EmailNotSent):
        deliver_email(message.id, config=replace(config, smtp_url="smtp://127.0.0.1:2525"), mint_link=mint_link)
    (taken,) = _DroppingServer.taken
    leaked = TOKEN_IN_LINK.search(taken).group(1)
    assert AuthToken.get(AuthToken.user == user.id).token_hash is None  # as before the attempt
    stored = EmailMessage.get_by_id(message.id)
    assert (stored.status, stored.attempts) == ("queued", 1) and leaked not in stored.body_text
    reset = {"token": leaked, "newPassword": "nouveau-mot-de-passe"}
    assert client.simulate_post("/api/auth/password-reset/confirm", json=reset).status_code == 400
    retried = TOKEN_IN_LINK.search(delivered_text(message)).group(1)  # the retry, by file
    assert client.simulate_post("/api/auth/password-reset/confirm", json={**reset, "token": retried}).status_code == 200


def test_a_link_burned_or_expired_before_delivery_withdraws_its_message(client, config):
    user = make_user()
    client.simulate_post("/api/auth/password-reset", json={"email": user.email})
    client.simulate_post("/api/auth/change-password", headers=signed_in(user),
                         json={"currentPassword": DEFAULT_PASSWORD, "newPassword": "nouveau-mot-de-passe"})
    burned = last_email(user.email, "password_reset")
    client.simulate_post("/api/auth/magic-link", json={"email": user.email})
    late = last_email(user.email, "magic_link")
    with clock.frozen_at(clock.now() + timedelta(minutes=15, seconds=1)):
        outcomes = [deliver_email(m.id, config=config, mint_link=mint_link) for m in (burned, late)]
    assert outcomes == [False, False]
    for message in (burned, late):
        stored = EmailMessage.get_by_id(message.id)
        assert (stored.status, stored.body_text, stored.sent_at) == ("withdrawn", None, None)
    assert AuthToken.select().where(AuthToken.user == user.id, AuthToken.token_hash.is_null(False)).count() == 0
