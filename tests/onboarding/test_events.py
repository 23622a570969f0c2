"""Processing of stored events: the mapping, no backward move, terminal events confirmed with the
provider, unknown requests, and the domain event every processed event publishes."""

from __future__ import annotations

import time

import pytest
import requests

from backend import events as domain_events
from backend.onboarding import events
from backend.onboarding.models import ProcessingStatus, SignatureEvent, SignatureRequest
from backend.onboarding.webhook import parse_event, record_signature_event
from backend.outbox import OutboxMessage
from tests.factories import make_organization
from tests.onboarding.conftest import event_body, live_request


def _envelope(pid: str, status: str = "pending_signature") -> SignatureRequest:
    return SignatureRequest.create(
        organization=make_organization().id, status=status, provider_signature_request_id=pid,
        identity_verification_policy="qualified", signature_level="qualified_electronic_signature",
        signer_on_registry_extract=True)


def _deliver(provider, name: str, pid: str | None, **kwargs) -> str | None:
    event = parse_event(event_body(name, pid, **kwargs))
    record_signature_event(event=event, retry_attempt=1)
    return events.process_signature_event(event["event_id"], provider=provider)


def _status(envelope: SignatureRequest) -> str:
    return SignatureRequest.get_by_id(envelope.id).status


def _control(simulator, pid: str, action: str) -> None:
    requests.post(f"{simulator.url}/_control/signature_requests/{pid}/{action}", timeout=5).raise_for_status()


@pytest.mark.parametrize(("name", "status"), [
    ("signature_request.activated", "pending_signature"),
    ("signer.notified", "signer_notified"),
    ("signer.link_opened", "signer_opened"),
    ("signer.done", "draft"),
    ("signer.error", "error"),
    ("signer.notification_delivery_failed", "error"),
])
def test_progress_events_move_the_envelope(provider, name, status):
    envelope = _envelope("prov-progress", status="draft")
    assert _deliver(provider, name, "prov-progress") == ProcessingStatus.PROCESSED
    assert _status(envelope) == status
    if status == "error":
        assert SignatureRequest.get_by_id(envelope.id).error_reason == name


@pytest.mark.parametrize(("action", "name", "status"), [
    ("sign", "signature_request.done", "signed"),
    ("decline", "signature_request.declined", "declined"),
    ("decline", "signer.declined", "declined"),
    ("expire", "signature_request.expired", "expired"),
])
def test_terminal_events_apply_the_status_the_provider_confirms(provider, simulator, action, name, status):
    pid = live_request(provider)
    envelope = _envelope(pid, status="signer_opened")
    _control(simulator, pid, action)
    assert _deliver(provider, name, pid) == ProcessingStatus.PROCESSED
    assert _status(envelope) == status


def test_a_canceled_request_is_confirmed_too(provider):
    pid = live_request(provider)
    envelope = _envelope(pid)
    provider.cancel(pid)
    _deliver(provider, "signature_request.canceled", pid)
    assert _status(envelope) == "canceled"


def test_a_terminal_event_the_provider_does_not_confirm_is_not_applied(provider):
    pid = live_request(provider)  # ongoing at the provider
    envelope = _envelope(pid, status="signer_opened")
    assert _deliver(provider, "signature_request.done", pid, status="done") == ProcessingStatus.PROCESSED
    assert _status(envelope) == "signer_opened"
    assert SignatureEvent.get(SignatureEvent.provider_signature_request_id == pid).processing_note == (
        "stays signer_opened")


def test_late_link_opened_does_not_reopen_a_signed_envelope(provider, simulator):
    pid = live_request(provider)
    envelope = _envelope(pid)
    _control(simulator, pid, "sign")
    _deliver(provider, "signature_request.done", pid)
    assert _deliver(provider, "signer.link_opened", pid) == ProcessingStatus.PROCESSED
    assert _status(envelope) == "signed"


def test_an_event_older_than_the_last_applied_one_moves_nothing(provider):
    envelope = _envelope("prov-order", status="pending_signature")
    now = int(time.time())
    _deliver(provider, "signer.error", "prov-order", event_time=now)
    _deliver(provider, "signer.notified", "prov-order", event_time=now - 60)
    assert _status(envelope) == "error"
    _deliver(provider, "signer.link_opened", "prov-order", event_time=now + 1)
    assert _status(envelope) == "signer_opened"


def test_events_of_unknown_requests_are_stored_and_ignored(provider):
    assert _deliver(provider, "signature_request.done", "prov-nobody-knows") == ProcessingStatus.UNKNOWN_REQUEST
    event = SignatureEvent.get(SignatureEvent.provider_signature_request_id == "prov-nobody-knows")
    assert event.processing_status == "unknown_request" and event.processed_at is not None


def test_unsubscribed_events_and_events_without_request_id_are_ignored(provider):
    _envelope("prov-ign")
    assert _deliver(provider, "signer.password_changed", "prov-ign") == ProcessingStatus.IGNORED
    assert _deliver(provider, "signer.notified", None) == ProcessingStatus.IGNORED


def test_an_event_is_processed_once(provider):
    _envelope("prov-once", status="draft")
    event = parse_event(event_body("signer.notified", "prov-once"))
    record_signature_event(event=event, retry_attempt=None)
    assert events.process_signature_event(event["event_id"], provider=provider) == ProcessingStatus.PROCESSED
    assert events.process_signature_event(event["event_id"], provider=provider) is None


def test_every_processed_event_is_published_once_in_its_transaction(provider, simulator):
    pid = live_request(provider)
    envelope = _envelope(pid)
    _control(simulator, pid, "sign")
    assert _deliver(provider, "signature_request.done", pid) == ProcessingStatus.PROCESSED
    assert _deliver(provider, "signature_request.done", "prov-mandate-elsewhere") == ProcessingStatus.UNKNOWN_REQUEST
    assert _status(envelope) == "signed"
    processed = [event.event_id for event in SignatureEvent.select().order_by(SignatureEvent.id)]
    subscribers = domain_events.SUBSCRIBERS[domain_events.SIGNATURE_EVENT_PROCESSED]
    published = [(message.actor_name, message.args) for message in OutboxMessage.select()
                 .where(OutboxMessage.actor_name.in_(subscribers)).order_by(OutboxMessage.id)]
    assert published == [(name, [event_id]) for event_id in processed for name in subscribers]
    assert events.process_signature_event(processed[0], provider=provider) is None  # done: nothing published again
    assert OutboxMessage.select().where(OutboxMessage.actor_name.in_(subscribers)).count() == len(published)
