"""Identity test helpers: the e-mails a request queued, the tokens they carry once delivered,
session cookies."""

from __future__ import annotations

import re
from email import message_from_bytes, policy
from pathlib import Path

from backend.email.messages import EmailMessage, deliver_email
from backend.identity.links import mint_link
from backend.runtime import current_runtime

TOKEN_IN_LINK = re.compile(r"(?:token=|/invitations/)([A-Za-z0-9_-]{40,})")


def last_email(to: str, template: str | None = None) -> EmailMessage:
    query = EmailMessage.select().where(EmailMessage.to_address == to.lower())
    if template:
        query = query.where(EmailMessage.template == template)
    return query.order_by(EmailMessage.created_at.desc(), EmailMessage.id).first()


def delivered_text(message: EmailMessage) -> str:
    """The text its reader gets: the message delivered now as the actor delivers it (a queued
    message holds no link: it is minted then) and read back from its latest `.eml` file."""
    config = current_runtime().config
    deliver_email(message.id, config=config, mint_link=mint_link)  # False when delivered before
    latest = max((Path(config.data_dir) / "mail").glob(f"*-{message.id}.eml"))  # names start with the time
    return message_from_bytes(latest.read_bytes(), policy=policy.default).get_content()


def token_in(message: EmailMessage) -> str:
    """The token of the link `message` carries, as delivered."""
    return TOKEN_IN_LINK.search(delivered_text(message)).group(1)


def cookie_of(answer) -> str:
    return answer.cookies["auth.session_token"].value


def cookie_header(token: str) -> dict[str, str]:
    return {"Cookie": f"auth.session_token={token}"}


def browser_of(answer) -> dict[str, str]:
    """The headers of the browser that asked for a magic link (`POST /api/auth/magic-link`'s
    answer): the link works only with its cookie."""
    return {"Cookie": f"auth.magic_link_browser={answer.cookies['auth.magic_link_browser'].value}"}


def verify_email(client, address: str, headers: dict[str, str] | None = None):
    """Open the latest verification link e-mailed to `address` (in the session of `headers`)."""
    token = token_in(last_email(address, "email_verification"))
    return client.simulate_post("/api/auth/email-verification/confirm", json={"token": token}, headers=headers or {})
