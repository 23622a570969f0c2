"""Processing of stored provider events (actor `process_signature_event`, queue `webhooks`).

For one event: the onboarding envelope with its provider id moves by `status.next_status`; an
event claiming a terminal status is confirmed first by asking the provider (a webhook body is
never trusted for a final state); the event becomes `processed` (or `unknown_request` /
`ignored`), and `onboarding.signature_event_processed` is published in the same transaction
(`backend.events`: the self-billing mandates of Specification C hear of it there, each subscriber
in its own actor, so none can break onboarding processing).

Safe to run twice: the event row is locked and only a `received` event is processed.
"""

from __future__ import annotations

from datetime import UTC, datetime

from peewee import IntegrityError

from backend import clock, events
from backend.db import transaction
from backend.logs import get_logger
from backend.onboarding.models import ProcessingStatus, SignatureEvent, SignatureRequest
from backend.onboarding.provider import ProviderRequest, SignatureProvider
from backend.onboarding.status import (
    EVENT_TARGETS,
    SUBSCRIBED_EVENTS,
    ESignStatus,
    asks_for_terminal,
    from_provider_status,
    next_status,
)

log = get_logger("esign.events")


class ConfirmationMissing(Exception):
    """A terminal event met an envelope that was unknown a moment before: process it again."""


def event_time(payload: dict) -> datetime | None:
    """`event_time` as Unix seconds (number or digits) or ISO 8601; None when absent or unreadable."""
    raw = payload.get("event_time")
    try:
        if isinstance(raw, int | float) or (isinstance(raw, str) and raw.strip().isdigit()):
            return datetime.fromtimestamp(int(raw), UTC)
        if isinstance(raw, str):
            parsed = datetime.fromisoformat(raw.replace("Z", "+00:00"))
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def process_signature_event(event_id: str, *, provider: SignatureProvider) -> str | None:
    """Process one stored event; returns its processing status, None when it was already done."""
    event = SignatureEvent.get_or_none(SignatureEvent.event_id == event_id)
    if event is None or event.processing_status != ProcessingStatus.RECEIVED:
        return None
    confirmed = _confirm(event, provider)
    with transaction():
        event = SignatureEvent.select().where(SignatureEvent.event_id == event_id).for_update().first()
        if event.processing_status != ProcessingStatus.RECEIVED:
            return None  # another delivery of the message processed it meanwhile
        status, note = _apply(event, confirmed)
        SignatureEvent.update(processing_status=status, processing_note=note, processed_at=clock.now()).where(
            SignatureEvent.id == event.id
        ).execute()
        log.info("signature event processed", extra={"fields": {
            "eventId": event.event_id, "eventName": event.event_name, "processingStatus": status, "note": note,
            "providerSignatureRequestId": event.provider_signature_request_id}})
        events.publish(events.SIGNATURE_EVENT_PROCESSED, event.event_id)
    return status


def _confirm(event: SignatureEvent, provider: SignatureProvider) -> ProviderRequest | None:
    """The provider's view of the request, for a terminal event of a known onboarding envelope."""
    pid = event.provider_signature_request_id
    if not pid or not asks_for_terminal(event.event_name):
        return None
    if not SignatureRequest.select().where(SignatureRequest.provider_signature_request_id == pid).exists():
        return None
    return provider.get_request(pid)


def _apply(event: SignatureEvent, confirmed: ProviderRequest | None) -> tuple[str, str]:
    pid = event.provider_signature_request_id
    if event.event_name not in SUBSCRIBED_EVENTS:
        return ProcessingStatus.IGNORED, "not a subscribed event"
    if not pid:
        return ProcessingStatus.IGNORED, "no provider signature request id in the event"
    request = (SignatureRequest.select()
               .where(SignatureRequest.provider_signature_request_id == pid).for_update().first())
    if request is None:
        return ProcessingStatus.UNKNOWN_REQUEST, "no onboarding envelope has this provider id"
    target = EVENT_TARGETS[event.event_name]
    if asks_for_terminal(event.event_name):
        if confirmed is None:
            raise ConfirmationMissing(event.event_id)
        target = from_provider_status(confirmed.status)
    when = event_time(event.payload)
    newer = when is None or request.last_event_at is None or when >= request.last_event_at
    moved = next_status(request.status, target, newer=newer)
    if moved is None:
        return ProcessingStatus.PROCESSED, f"stays {request.status}"
    try:
        with transaction():  # a savepoint: the event row is still written when this move is refused
            apply_status(request, moved, reason=event.event_name if moved == ESignStatus.ERROR else None,
                         event_at=when)
    except IntegrityError:  # the one-pending-envelope index: a newer envelope of the organization is live
        return ProcessingStatus.IGNORED, (f"stays {request.status}: another envelope of the organization is "
                                          f"pending ({moved} refused)")
    return ProcessingStatus.PROCESSED, f"{request.status} -> {moved}"


def apply_status(request: SignatureRequest, status: ESignStatus, *, reason: str | None = None,
                 event_at: datetime | None = None) -> None:
    """Write a status move of a locked envelope (shared by events, reconciliation and creation);
    a move to `signed` publishes `onboarding.envelope_signed` (signed files kept, SEPA mandate
    recorded: `backend.events`)."""
    now = clock.now()
    changes = {SignatureRequest.status: status, SignatureRequest.status_changed_at: now,
               SignatureRequest.updated_at: now, SignatureRequest.error_reason: reason}
    if event_at is not None:
        changes[SignatureRequest.last_event_at] = max(event_at, request.last_event_at or event_at)
    SignatureRequest.update(changes).where(SignatureRequest.id == request.id).execute()
    if status == ESignStatus.SIGNED:
        events.publish(events.ENVELOPE_SIGNED, request.id)

