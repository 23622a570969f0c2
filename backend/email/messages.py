"""Queue e-mails with the change that causes them, deliver them from the `email` queue.

`queue_email` renders the message, stores it and records an outbox row in the caller's
transaction: the request never waits for SMTP and a rolled-back change sends nothing.
`deliver_email` (the actor's service) sends by SMTP when `SMTP_URL` is set, else writes an
`.eml` file under `<data dir>/mail/`. A failure is counted and raised so Dramatiq retries it.
E-mails carry reset and sign-in links and SMTP carries credentials, so they never cross the
network in clear text: `smtps://` is implicit TLS, `smtp://` requires STARTTLS (a server that
does not offer it is refused), except to a loopback host (a local relay).
Links and the platform's name come from the process settings `backend.runtime.boot` applies
(`use_links`); before boot, the configuration's defaults.
Once delivered the body is erased (a message queued before migration 154 may hold a single-use
link, which must not outlive its purpose in the database).
A single-use link is not even written before delivery: queued with `LinkAtDelivery`, the message keeps a
placeholder and the row the token belongs to, and `deliver_email` has `mint_link` create the token
in its transaction, sending the link and storing only its digest. A failed send rolls the digest
back, so a message never delivered holds no usable link anywhere (row, broker, logs), and a
message sent again mints again (only its last link works).
A message may carry files (`Attachment`): each is a reference to a stored object (storage context
and key, `email_attachment`), never its bytes in the outbox row; it is read from storage when the
message is sent, at most `MAX_ATTACHMENT_BYTES`, and a missing or changed file fails the delivery
(retried) rather than sending a message without it.
"""

from __future__ import annotations

import ipaddress
import smtplib
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from email.message import EmailMessage as MimeMessage
from email.utils import formatdate, make_msgid
from pathlib import Path
from urllib.parse import unquote, urlencode, urlsplit

from peewee import BigIntegerField, CharField, IntegerField, TextField
from playhouse.postgres_ext import DateTimeTZField

from backend import clock, outbox
from backend.config import Config
from backend.db import transaction
from backend.email.templates import invites_reply, render
from backend.logs import get_logger
from backend.model import BaseModel, created_at_field, new_id
from storage import Storage

log = get_logger("email")
SMTP_TIMEOUT_SECONDS = 20
MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024  # also the table's CHECK (migration 152)


class EmailNotSent(Exception):
    """Delivery failed; the actor raises it so Dramatiq retries with backoff."""


class EmailMessage(BaseModel):
    id = CharField(primary_key=True, max_length=36, default=new_id)
    template = CharField(max_length=60)
    to_address = CharField(max_length=320)
    subject = CharField(max_length=300)
    body_text = TextField(null=True)
    status = CharField(max_length=40, default="queued")
    attempts = IntegerField(default=0)
    last_error = TextField(null=True)
    created_at = created_at_field()
    sent_at = DateTimeTZField(null=True)
    link_kind = CharField(max_length=20, null=True)
    link_ref = CharField(max_length=36, null=True)

    class Meta:
        table_name = "email_message"


class EmailAttachment(BaseModel):
    """A stored file a message carries, by reference (read from storage when it is sent)."""

    id = CharField(primary_key=True, max_length=36, default=new_id)
    email_message_id = CharField(max_length=36)
    storage_context = CharField(max_length=80)
    storage_key = CharField(max_length=300)
    filename = CharField(max_length=200)
    content_type = CharField(max_length=100)
    size_bytes = BigIntegerField()

    class Meta:
        table_name = "email_attachment"


@dataclass(frozen=True)
class Attachment:
    """A stored object to attach: where it is, the name and type the recipient sees, its size."""

    storage_context: str
    storage_key: str
    filename: str
    content_type: str
    size_bytes: int


class AttachmentUnavailable(OSError):
    """An attachment is missing from storage or is not the size recorded: the delivery is retried."""


@dataclass(frozen=True)
class LinkAtDelivery:
    """A single-use link created when the message is delivered: `kind` says which rows `ref` names
    (the one that will hold the token's digest)."""

    kind: str
    ref: str


# (kind, ref) -> the link to send, or None when it may no longer be (used, burned or expired).
LinkMinter = Callable[[str, str], "str | None"]


def _link_placeholder(message_id: str) -> str:
    """Where the link goes in a stored body; the random message id keeps a user's text from faking it."""
    return f"[lien {message_id}]"


@dataclass(frozen=True)
class _Links:
    public_base_url: str = Config.public_base_url
    platform_name: str = Config.platform_name


_links = _Links()


def use_links(*, public_base_url: str, platform_name: str) -> None:
    """The base of the links e-mails carry and the platform name they sign with (called at boot)."""
    global _links
    _links = _Links(public_base_url, platform_name)


def public_link(path: str, **query: str) -> str:
    """An absolute link to the platform (`PUBLIC_BASE_URL`) for an e-mail."""
    url = _links.public_base_url + path
    return f"{url}?{urlencode(query)}" if query else url


def queue_email(template: str, *, to: str, link_at_delivery: LinkAtDelivery | None = None,
                attachments: tuple[Attachment, ...] = (), **context: str) -> EmailMessage:
    """Store the message (and the references of its `attachments`) and hand it to the
    `deliver_email` actor once the transaction commits; with `link_at_delivery`, the template's
    `{link}` is minted at delivery (module docstring)."""
    message_id, link_kind, link_ref = new_id(), None, None
    if link_at_delivery is not None:
        context["link"] = _link_placeholder(message_id)
        link_kind, link_ref = link_at_delivery.kind, link_at_delivery.ref
    subject, body = render(template, platform=_links.platform_name, **context)
    for attachment in attachments:
        if not 0 < attachment.size_bytes <= MAX_ATTACHMENT_BYTES:
            raise ValueError(f"an attachment is 1 byte to {MAX_ATTACHMENT_BYTES} bytes ({attachment.size_bytes})")
    with transaction():
        message = EmailMessage.create(id=message_id, template=template, to_address=to, subject=subject,
                                      body_text=body, link_kind=link_kind, link_ref=link_ref)
        for attachment in attachments:
            EmailAttachment.create(email_message_id=message.id, storage_context=attachment.storage_context,
                                   storage_key=attachment.storage_key, filename=attachment.filename,
                                   content_type=attachment.content_type, size_bytes=attachment.size_bytes)
        outbox.enqueue("deliver_email", message.id)
    return message


def deliver_email(email_id: str, *, config: Config, mint_link: LinkMinter | None = None,
                  storage: Storage | None = None) -> bool:
    """Send a queued message once per row; False when it was already sent, or withdrawn (its
    single-use link, which `mint_link` creates, may no longer be: nothing is sent). Its
    attachments are read from `storage`.

    The claim is the row's lock, held while sending: a second copy of the message (a re-send
    after Redis lost data, a redelivery) waits for the first one's outcome instead of skipping
    it, then finds the message sent (False: its outbox row is done for a real reason) or, when
    the first attempt failed, sends it itself."""
    failure: Exception | None = None
    with transaction():
        message = (
            EmailMessage.select()
            .where(EmailMessage.id == email_id, EmailMessage.status == "queued")
            .for_update()
            .first()
        )
        if message is None:
            return False
        try:
            with transaction():  # a savepoint: a failed send rolls the minted token's digest back
                body = _body_with_link(message, mint_link)
                if body is not None:
                    mime = _mime(message, config, body)
                    _attach(mime, message.id, storage)
                    _send(mime, message, config)
        except (OSError, smtplib.SMTPException) as exc:
            failure = exc
            message.attempts += 1
            message.last_error = f"{type(exc).__name__}: {exc}"[:2000]
        else:
            if body is None:
                message.status, message.body_text = "withdrawn", None
            else:
                message.attempts += 1
                message.status, message.sent_at, message.body_text = "sent", clock.now(), None
        message.save()
    if failure is not None:
        log.warning("e-mail not sent; it will be retried",
                    extra={"fields": {"emailId": email_id, "template": message.template, "error": str(failure)}})
        raise EmailNotSent(str(failure)) from failure
    if body is None:
        log.info("e-mail withdrawn: its link was used or expired before delivery",
                 extra={"fields": {"emailId": email_id, "template": message.template}})
        return False
    log.info("e-mail sent", extra={"fields": {"emailId": email_id, "template": message.template}})
    return True


def _body_with_link(message: EmailMessage, mint_link: LinkMinter | None) -> str | None:
    """The body to send: a link minted now in place of its placeholder; None when it may not be."""
    if message.link_kind is None:
        return message.body_text or ""
    if mint_link is None:
        raise RuntimeError(f"e-mail {message.id} carries a {message.link_kind} link and no minter was given")
    link = mint_link(message.link_kind, message.link_ref)
    return None if link is None else (message.body_text or "").replace(_link_placeholder(message.id), link)


def _mime(message: EmailMessage, config: Config, body: str) -> MimeMessage:
    mime = MimeMessage()
    mime["From"] = config.mail_from
    mime["To"] = message.to_address
    mime["Subject"] = message.subject
    if invites_reply(message.template) and config.platform_billing_contact_email:
        mime["Reply-To"] = config.platform_billing_contact_email
    mime["Date"] = formatdate(usegmt=True)
    mime["Message-ID"] = make_msgid(idstring=message.id)
    # An .eml file is read by a developer: 8-bit UTF-8 keeps its links whole and copyable, where
    # quoted-printable would cut them (`=` soft breaks, `=3D`). SMTP keeps the safe default.
    mime.set_content(body, **({} if config.smtp_url else {"cte": "8bit"}))
    return mime


def _attach(mime: MimeMessage, email_id: str, storage: Storage | None) -> None:
    """Add the message's attachments, read from storage now (each bounded and checked)."""
    for attachment in EmailAttachment.select().where(EmailAttachment.email_message_id == email_id).order_by(
            EmailAttachment.id):
        if storage is None:
            raise AttachmentUnavailable("this process has no storage to read the attachments from")
        where = (attachment.storage_context, attachment.storage_key)
        try:  # the size first: nothing over the bound is read into memory
            data = storage.read_bytes(*where) if storage.size(*where) == attachment.size_bytes else b""
        except Exception as exc:  # a storage back end's own "not found" or outage
            raise AttachmentUnavailable(f"attachment {attachment.filename} unreadable: {exc}") from exc
        if len(data) != attachment.size_bytes or len(data) > MAX_ATTACHMENT_BYTES:
            raise AttachmentUnavailable(f"attachment {attachment.filename} is {len(data)} bytes, "
                                        f"{attachment.size_bytes} were recorded")
        maintype, _, subtype = attachment.content_type.partition("/")
        mime.add_attachment(data, maintype=maintype, subtype=subtype or "octet-stream",
                            filename=attachment.filename)


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine (no DNS lookup: only `localhost` and loopback addresses)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _send(mime: MimeMessage, message: EmailMessage, config: Config) -> None:
    if not config.smtp_url:
        folder = Path(config.data_dir) / "mail"
        folder.mkdir(parents=True, exist_ok=True)
        stamp = clock.now().strftime("%Y%m%dT%H%M%S")
        (folder / f"{stamp}-{message.id}.eml").write_bytes(bytes(mime))
        return
    url = urlsplit(config.smtp_url)
    host, user, password = url.hostname or "localhost", url.username, url.password
    if url.scheme == "smtps":
        server: smtplib.SMTP = smtplib.SMTP_SSL(
            host, url.port or 465, timeout=SMTP_TIMEOUT_SECONDS, context=ssl.create_default_context()
        )
    else:
        server = smtplib.SMTP(host, url.port or 587, timeout=SMTP_TIMEOUT_SECONDS)
    with server:
        server.ehlo()
        if url.scheme != "smtps":
            if server.has_extn("starttls"):
                server.starttls(context=ssl.create_default_context())
                server.ehlo()
            elif not is_loopback(host):
                raise smtplib.SMTPNotSupportedError(
                    f"{host} offers no STARTTLS: nothing is sent in clear text (use smtps:// for implicit TLS)")
        if user:
            server.login(unquote(user), unquote(password or ""))
        server.send_message(mime)
