"""Envelopes in `error` are superseded cleanly: their provider request is cancelled when a new
envelope replaces them (start, relaunch, reset), a later event on them is stored and ignored, and
reconciliation sees an `error` envelope whose request was signed meanwhile."""

from __future__ import annotations

import requests

from backend.onboarding import envelopes, events, reconciliation, supervision
from backend.onboarding.models import ProcessingStatus, SignatureEvent, SignatureRequest
from backend.onboarding.webhook import parse_event, record_signature_event
from tests.factories import make_admin, signed_in
from tests.onboarding.conftest import event_body, live_request


def _errored(organization_id: str, pid: str | None) -> SignatureRequest:
    return SignatureRequest.create(
        organization=organization_id, status="error", provider_signature_request_id=pid, error_reason="signer.error",
        identity_verification_policy="qualified", signature_level="qualified_electronic_signature",
        signer_on_registry_extract=True)


def _deliver(provider, name: str, pid: str) -> str | None:
    event = parse_event(event_body(name, pid))
    record_signature_event(event=event, retry_attempt=1)
    return events.process_signature_event(event["event_id"], provider=provider)


def _start(client, organization, manager):
    return client.simulate_post(f"/api/organizations/{organization.id}/onboarding/start", json={},
                                headers=signed_in(manager, organization))


def test_a_new_start_supersedes_an_errored_envelope_and_cancels_its_request(client, onboarding_org, provider,
                                                                          simulator, runtime):
    organization, manager = onboarding_org()
    old_pid = live_request(provider)
    old = _errored(organization.id, old_pid)
    started = _start(client, organization, manager)
    assert started.status_code == 201
    new_id = started.json["data"]["signatureRequest"]["id"]
    superseded = SignatureRequest.get_by_id(old.id)
    assert (superseded.status, superseded.error_reason) == ("canceled", "superseded")
    assert envelopes.create_signature_envelope(new_id, provider=provider, storage=runtime.storage,
                                               config=runtime.config) == "pending_signature"
    assert simulator.store.requests[old_pid]["status"] == "canceled"
    assert not SignatureRequest.get_by_id(old.id).provider_cancel_due

    assert _deliver(provider, "signer.link_opened", old_pid) == ProcessingStatus.PROCESSED
    assert SignatureRequest.get_by_id(old.id).status == "canceled"
    assert SignatureRequest.get_by_id(new_id).status == "pending_signature"


def test_an_event_that_would_make_a_second_pending_envelope_is_stored_and_ignored(onboarding_org, provider):
    organization, _ = onboarding_org()
    old_pid = live_request(provider)
    old = _errored(organization.id, old_pid)
    SignatureRequest.create(
        organization=organization.id, status="pending_signature", provider_signature_request_id=live_request(provider),
        identity_verification_policy="qualified", signature_level="qualified_electronic_signature",
        signer_on_registry_extract=True)
    assert _deliver(provider, "signer.link_opened", old_pid) == ProcessingStatus.IGNORED
    stored = SignatureEvent.get(SignatureEvent.provider_signature_request_id == old_pid)
    assert stored.processing_status == ProcessingStatus.IGNORED and "pending" in stored.processing_note
    assert SignatureRequest.get_by_id(old.id).status == "error"


def test_relaunch_and_reset_cancel_the_request_of_an_errored_envelope(client, onboarding_org, provider, simulator):
    admin = make_admin()
    relaunched_org, _ = onboarding_org()
    relaunched_pid = live_request(provider)
    relaunched = _errored(relaunched_org.id, relaunched_pid)
    answer = supervision.relaunch_envelopes(signature_request_ids=[relaunched.id], statuses=None,
                                            actor_user_id=admin.id, provider=provider)
    assert [r["id"] for r in answer["relaunched"]] == [relaunched.id]
    assert simulator.store.requests[relaunched_pid]["status"] == "canceled"
    assert SignatureRequest.get_by_id(relaunched.id).status == "canceled"

    reset_org, _ = onboarding_org()
    reset_pid = live_request(provider)
    _errored(reset_org.id, reset_pid)
    reset = client.simulate_post(f"/api/admin/organizations/{reset_org.id}/reset-onboarding",
                                 headers=signed_in(admin))
    assert reset.status_code == 200
    assert simulator.store.requests[reset_pid]["status"] == "canceled"


def test_a_due_provider_cancel_is_also_made_by_the_reconciliation_pass(client, onboarding_org, provider,
                                                                         simulator):
    organization, manager = onboarding_org()
    old_pid = live_request(provider)
    old = _errored(organization.id, old_pid)
    assert _start(client, organization, manager).status_code == 201
    assert SignatureRequest.get_by_id(old.id).provider_cancel_due
    reconciliation.reconcile_pending(older_than_seconds=3600, provider=provider)
    assert simulator.store.requests[old_pid]["status"] == "canceled"
    assert not SignatureRequest.get_by_id(old.id).provider_cancel_due


def test_reconciliation_sees_an_errored_envelope_signed_at_the_provider(onboarding_org, provider, simulator):
    from datetime import timedelta

    from backend import clock

    organization, _ = onboarding_org()
    pid = live_request(provider)
    errored = _errored(organization.id, pid)
    SignatureRequest.update(status_changed_at=clock.now() - timedelta(hours=2)).where(
        SignatureRequest.id == errored.id).execute()
    requests.post(f"{simulator.url}/_control/signature_requests/{pid}/sign", timeout=5).raise_for_status()
    counts = reconciliation.reconcile_pending(older_than_seconds=3600, provider=provider)
    assert counts["moved"] == 1
    assert SignatureRequest.get_by_id(errored.id).status == "signed"


def test_reconciliation_leaves_an_errored_envelope_whose_request_is_still_live(onboarding_org, provider):
    from datetime import timedelta

    from backend import clock

    organization, _ = onboarding_org()
    errored = _errored(organization.id, live_request(provider))
    SignatureRequest.update(status_changed_at=clock.now() - timedelta(hours=2)).where(
        SignatureRequest.id == errored.id).execute()
    assert reconciliation.reconcile_pending(older_than_seconds=3600, provider=provider)["checked"] == 1
    assert SignatureRequest.get_by_id(errored.id).status == "error"
    # checked once per period: the next pass asks the provider about other envelopes first
    assert reconciliation.reconcile_pending(older_than_seconds=3600, provider=provider)["checked"] == 0
