"""Provider events of self-billing mandates, through the onboarding webhook processing: the mapping
table over every provider event, confirmation of `done` with the provider, the signed PDF checks,
events on mandates that are not pending, and a routing that never throws."""

from __future__ import annotations

from datetime import timedelta

import pytest
import requests

from backend import clock
from backend import events as domain_events
from backend.billing.models import SelfBillingMandate
from backend.billing.self_billing import mandate_events
from backend.billing.self_billing.mandate_document import MAX_PDF_BYTES, STORAGE_CONTEXT
from backend.onboarding import events
from backend.onboarding.models import ProcessingStatus, SignatureEvent, SignatureRequest
from backend.onboarding.status import SUBSCRIBED_EVENTS
from backend.onboarding.webhook import parse_event, record_signature_event
from backend.outbox import OutboxMessage
from tests.billing.helpers import approved_org
from tests.billing.self_billing.mandate_fixtures import make_simulator, provider, runtime, simulator  # noqa: F401
from tests.factories import make_organization
from tests.onboarding.conftest import event_body, live_request

SIMULATOR_ACTION = {"signature_request.done": "sign", "signature_request.declined": "decline",
                    "signer.declined": "decline", "signature_request.expired": "expire"}
EXPECTED = {name: "pending_signature" for name in SUBSCRIBED_EVENTS} | {
    "signature_request.done": "signed",
    "signer.declined": "declined", "signature_request.declined": "declined",
    "signature_request.expired": "declined", "signature_request.canceled": "declined",
    "signer.error": "declined", "signer.notification_delivery_failed": "declined",
    "signature_request.unknown_event": "pending_signature",
}


def _mandate(pid: str, status: str = "pending_signature") -> SelfBillingMandate:
    now = clock.now()
    dates = {"signed": {"signed_at": now}, "declined": {"declined_at": now},
             "revoked": {"signed_at": now, "revoked_at": now, "revoke_reason": "test"}}.get(status, {})
    return SelfBillingMandate.create(organization_id=approved_org("distributor").id, status=status,
                                     esign_request_ref=pid, requested_at=now,
                                     signer={"firstName": "Alice", "lastName": "Martin", "email": "a@example.com"},
                                     **dates)


def _deliver(provider, name: str, pid: str) -> str | None:
    """Store the event as the webhook does, process it as the worker does, then run the routing
    the processing published (the subscriber actor's function) with its queued arguments."""
    event = parse_event(event_body(name, pid))
    record_signature_event(event=event, retry_attempt=1)
    events.process_signature_event(event["event_id"], provider=provider)
    for message in _published(event["event_id"]):
        mandate_events.handle_signature_event(*message.args)
    return event["event_id"]


def _published(event_id: str) -> list[OutboxMessage]:
    subscribers = domain_events.SUBSCRIBERS[domain_events.SIGNATURE_EVENT_PROCESSED]
    return [message for message in OutboxMessage.select().where(OutboxMessage.actor_name.in_(subscribers))
            .order_by(OutboxMessage.id) if message.args == [event_id]]


def _queued() -> list[list]:
    return [m.args for m in OutboxMessage.select().where(OutboxMessage.actor_name == mandate_events.APPLY_ACTOR)
            .order_by(OutboxMessage.id)]


def _run_queued(provider, runtime) -> list[str | None]:
    return [mandate_events.apply_provider_event(*args, provider=provider, storage=runtime.storage)
            for args in _queued()]


def _scopes(log_lines) -> list[str]:
    return [line["scope"] for line in log_lines() if line["scope"].startswith("billing.self_billing_mandate.")]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_mapping_of_every_provider_event(provider, simulator, runtime, name):
    pid = live_request(provider)
    mandate = _mandate(pid)
    if name in SIMULATOR_ACTION:
        simulator.store.act(pid, SIMULATOR_ACTION[name])
    _deliver(provider, name, pid)
    _run_queued(provider, runtime)
    row = SelfBillingMandate.get_by_id(mandate.id)
    assert row.status == EXPECTED[name]
    assert len(_queued()) == (0 if EXPECTED[name] == "pending_signature" else 1)
    if row.status == "declined":
        assert row.decline_reason == name and row.declined_at is not None
    if row.status == "signed":
        assert row.signed_at is not None
        content = runtime.storage.read_bytes(STORAGE_CONTEXT, row.document_storage_key)
        assert content.startswith(b"%PDF-") and b"signed at esign simulator" in content
        assert row.document_storage_key == f"{row.organization_id.replace(':', '-')}/{row.id}.pdf"


def test_done_is_applied_only_once_the_provider_confirms_it(provider, simulator, runtime, log_lines):
    pid = live_request(provider)
    mandate = _mandate(pid)
    _deliver(provider, "signature_request.done", pid)  # a forged or early `done`: the request is ongoing
    assert _run_queued(provider, runtime) == [None]
    assert SelfBillingMandate.get_by_id(mandate.id).status == "pending_signature"
    assert "billing.self_billing_mandate.webhook_ignored" in _scopes(log_lines)


@pytest.mark.parametrize(("content", "problem"), [
    (b"<html>not a pdf</html>", "not a PDF"),
    (b"%PDF-1.7\n" + b"0" * MAX_PDF_BYTES, "over the"),
])
def test_a_signed_file_that_is_no_pdf_or_over_5_mb_declines_the_mandate(
        provider, simulator, runtime, log_lines, content, problem):
    pid = live_request(provider)
    mandate = _mandate(pid)
    simulator.store.requests[pid]["documents"][0]["content"] = content
    simulator.store.act(pid, "sign")
    _deliver(provider, "signature_request.done", pid)
    _run_queued(provider, runtime)
    row = SelfBillingMandate.get_by_id(mandate.id)
    assert row.status == "declined" and row.decline_reason.startswith("signed_document_invalid")
    assert problem in row.decline_reason and row.document_storage_key is None
    assert "billing.self_billing_mandate.webhook_apply_failed" in _scopes(log_lines)


@pytest.mark.parametrize("status", ["draft", "declined", "revoked", "signed"])
def test_events_on_a_mandate_not_pending_are_ignored_and_done_on_signed_is_a_no_op(
        provider, simulator, runtime, log_lines, status):
    pid = live_request(provider)
    if status == "draft":
        mandate = SelfBillingMandate.create(organization_id=approved_org("distributor").id, esign_request_ref=pid,
                                            signer={"firstName": "A", "lastName": "B", "email": "a@example.com"})
    else:
        mandate = _mandate(pid, status)
    simulator.store.act(pid, "sign")
    _deliver(provider, "signature_request.done", pid)
    _deliver(provider, "signature_request.canceled", pid)
    assert _queued() == []
    assert SelfBillingMandate.get_by_id(mandate.id).status == status
    ignored = _scopes(log_lines).count("billing.self_billing_mandate.webhook_ignored")
    assert ignored == (1 if status == "signed" else 2)  # `done` on `signed`: a silent no-op


def test_a_queued_event_finding_the_mandate_moved_meanwhile_changes_nothing(provider, simulator, runtime):
    pid = live_request(provider)
    mandate = _mandate(pid)
    simulator.store.act(pid, "decline")
    _deliver(provider, "signer.declined", pid)
    _deliver(provider, "signature_request.declined", pid)
    assert _run_queued(provider, runtime) == ["declined", None]  # both queued, the second finds it declined
    assert SelfBillingMandate.get_by_id(mandate.id).decline_reason == "signer.declined"


def test_the_handler_never_throws_and_the_onboarding_processing_stands(provider, simulator, log_lines, monkeypatch):
    envelope = SignatureRequest.create(
        organization=make_organization().id, status="signer_notified", provider_signature_request_id="prov-env",
        identity_verification_policy="qualified", signature_level="qualified_electronic_signature",
        signer_on_registry_extract=True)

    def broken(received):
        SelfBillingMandate.update(updated_at=clock.now()).execute()  # a write the failure must roll back
        raise RuntimeError("mandate store unavailable")

    monkeypatch.setattr(mandate_events, "route_event", broken)
    event_id = _deliver(provider, "signer.link_opened", "prov-env")
    assert len(_published(event_id)) == 1  # the routing ran in its own actor, after the processing
    assert SignatureRequest.get_by_id(envelope.id).status == "signer_opened"
    assert SignatureEvent.get(SignatureEvent.event_id == event_id).processing_status == ProcessingStatus.PROCESSED
    [failed] = [line for line in log_lines() if line["scope"] == "billing.self_billing_mandate.webhook_apply_failed"]
    assert failed["eventId"] == event_id and "mandate store unavailable" in failed["error"]


def test_the_routing_is_a_subscriber_of_the_processed_signature_event():
    import actors.billing.self_billing as actors

    [subscriber] = domain_events.SUBSCRIBERS[domain_events.SIGNATURE_EVENT_PROCESSED]
    assert subscriber == actors.route_self_billing_mandate_event.actor_name


def test_the_simulator_signer_page_signs_a_mandate_request(provider, simulator):
    """The simulator treats a mandate request like an onboarding envelope: its signer page offers
    sign and decline, and signing makes the signed file downloadable."""
    pid = live_request(provider)
    page = requests.get(f"{simulator.url}/sign/{pid}", timeout=5)
    assert f'action="/sign/{pid}/sign"' in page.text and f'action="/sign/{pid}/decline"' in page.text
    requests.post(f"{simulator.url}/sign/{pid}/sign", timeout=5).raise_for_status()
    remote = provider.get_request(pid)
    assert remote.status == "done"
    assert b"signed at esign simulator" in provider.download_document(pid, remote.document_ids[0])


def test_reconciliation_applies_the_final_status_of_mandates_whose_webhooks_were_lost(provider, simulator, runtime):
    old = clock.now() - timedelta(hours=2)
    signed, declined, ongoing = (live_request(provider) for _ in range(3))
    mandates = {pid: _mandate(pid) for pid in (signed, declined, ongoing)}
    fresh = _mandate(live_request(provider))
    simulator.store.act(signed, "sign")  # the simulator has no callback: these webhooks are lost
    simulator.store.act(declined, "expire")
    simulator.store.act(fresh.esign_request_ref, "sign")
    SelfBillingMandate.update(updated_at=old).where(SelfBillingMandate.id.in_([m.id for m in mandates.values()])
                                                     ).execute()
    counts = mandate_events.reconcile_pending(older_than_seconds=3600, provider=provider, storage=runtime.storage)
    assert counts == {"checked": 3, "moved": 2, "failed": 0}
    status = {pid: SelfBillingMandate.get_by_id(m.id).status for pid, m in mandates.items()}
    assert status == {signed: "signed", declined: "declined", ongoing: "pending_signature"}
    assert SelfBillingMandate.get_by_id(mandates[declined].id).decline_reason == "signature_request.expired"
    assert SelfBillingMandate.get_by_id(fresh.id).status == "pending_signature"  # changed too recently
    assert SelfBillingMandate.get_by_id(mandates[ongoing].id).updated_at > old  # asked: the others go first
    assert mandate_events.reconcile_pending(older_than_seconds=3600, provider=provider,
                                            storage=runtime.storage)["checked"] == 0
    SelfBillingMandate.update(updated_at=old).where(SelfBillingMandate.id == mandates[ongoing].id).execute()
    simulator.store.faults.update({"unavailable_calls": 8})
    assert mandate_events.reconcile_pending(older_than_seconds=3600, provider=provider,
                                            storage=runtime.storage)["failed"] == 1
