"""Ingest of the provider's webhook: authenticate, store once, hand over.

`POST /api/webhooks/esign` calls `receive_signature_webhook` with the raw body and headers. The
HMAC-SHA256 of the raw bytes, keyed with `ESIGN_WEBHOOK_SECRET`, must equal
`X-Esign-Signature-256` (`sha256=<hex>`, compared in constant time) and `X-Esign-Issued-At`
(Unix seconds) must lie within 300 s of now (`backend.webhook_signature`); anything else is 401
`AUTH_SIGNATURE_WEBHOOK_INVALID`. The event row and its outbox row commit together; a replayed
`event_id` inserts nothing (`ON CONFLICT (event_id) DO NOTHING`) and queues nothing.
"""

from __future__ import annotations

from psycopg2.extras import Json

from backend import clock, json_input, outbox, webhook_signature
from backend.db import database, transaction
from backend.errors import ValidationError
from backend.logs import log_event
from backend.onboarding.models import ProcessingStatus

SCOPE = "esign.webhook"
PROCESSING_ACTOR = "process_signature_event"
# Written out: an acknowledgement's CPU went mostly to peewee building this statement.
INSERT_EVENT = (
    "INSERT INTO esign_webhook_event (event_id, event_name, provider_signature_request_id, payload, retry_attempt,"
    " processing_status, received_at) VALUES (%s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (event_id) DO NOTHING RETURNING id"
)


def parse_event(body: bytes) -> dict:
    """The event object; ValidationError when it lacks a string `event_id` or `event_name`."""
    event = json_input.loads(body, what="the webhook body")
    if not isinstance(event, dict):
        raise ValidationError("the webhook body must be a JSON object")
    problems = {
        name: [f"required, a non-empty string of at most {limit} characters"]
        for name, limit in (("event_id", 200), ("event_name", 80))
        if not isinstance(event.get(name), str) or not event[name].strip() or len(event[name]) > limit
    }
    if problems:
        raise ValidationError("the webhook event is malformed", fields=problems)
    return event


def provider_request_id(event: dict) -> str | None:
    """`data.signature_request.id`, the provider's identifier of the request, when present."""
    data = event.get("data")
    request = data.get("signature_request") if isinstance(data, dict) else None
    value = request.get("id") if isinstance(request, dict) else None
    return value[:120] if isinstance(value, str) and value else None


def record_signature_event(*, event: dict, retry_attempt: int | None) -> bool:
    """Store the event once with its processing queued; False when `event_id` was already stored."""
    with transaction():
        inserted = database.execute_sql(INSERT_EVENT, (
            event["event_id"], event["event_name"], provider_request_id(event), Json(event), retry_attempt,
            ProcessingStatus.RECEIVED.value, clock.now(),
        )).fetchone() is not None
        if inserted:
            outbox.enqueue(PROCESSING_ACTOR, event["event_id"])
    return bool(inserted)


def receive_signature_webhook(*, body: bytes, signature: str | None, issued_at: str | None,
                              retry: str | None, secret: str | None) -> dict:
    """Verify, store and acknowledge one delivery: `{received: true, duplicate: bool}`."""
    webhook_signature.verify(body=body, signature=signature, issued_at=issued_at, secret=secret, scope=SCOPE)
    event = parse_event(body)
    try:
        retry_attempt = int(retry) if retry is not None else None
    except ValueError:
        retry_attempt = None
    duplicate = not record_signature_event(event=event, retry_attempt=retry_attempt)
    log_event(SCOPE, "webhook received", eventId=event["event_id"], eventName=event["event_name"],
              providerSignatureRequestId=provider_request_id(event), retry=retry_attempt, duplicate=duplicate)
    return {"received": True, "duplicate": duplicate}
