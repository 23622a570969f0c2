"""Onboarding envelopes end to end against the simulator: start, creation at the provider,
state with reconciliation, signed files, failures left in `error` and relaunched."""

from __future__ import annotations

import threading

import pytest
import requests

from backend.db import database
from backend.onboarding import documents, envelopes, reconciliation
from backend.onboarding.models import SignatureDocument, SignatureRequest
from backend.outbox import OutboxMessage
from tests.factories import add_member, make_organization, make_user, signed_in
from tests.onboarding.conftest import live_request


def _start(client, organization, manager, body=None):
    return client.simulate_post(f"/api/organizations/{organization.id}/onboarding/start", json=body or {},
                                headers=signed_in(manager, organization))


def _create(envelope_id: str, provider, runtime) -> str:
    return envelopes.create_signature_envelope(envelope_id, provider=provider, storage=runtime.storage,
                                               config=runtime.config)


def test_start_records_a_pending_qualified_envelope_and_queues_its_creation(client, onboarding_org):
    organization, manager = onboarding_org()
    answer = _start(client, organization, manager)
    assert answer.status_code == 201
    envelope = answer.json["data"]["signatureRequest"]
    assert envelope["status"] == "pending_creation" and envelope["providerSignatureRequestId"] is None
    assert envelope["documents"] == [
        {"type": t, "identityVerificationPolicy": "qualified", "signatureLevel": "qualified_electronic_signature",
         "authenticationMode": None, "signedFileStored": False}
        for t in ("framework_contract", "cgu_acceptance", "sepa_mandate")]
    queued = OutboxMessage.get(OutboxMessage.actor_name == "create_signature_envelope")
    assert queued.args == [envelope["id"]]
    assert envelopes.has_pending_envelope(organization.id)
    again = _start(client, organization, manager)
    assert again.status_code == 409 and again.json["error"]["details"]["reason"] == "onboarding_pending"


def test_start_refusals(client, onboarding_org):
    organization, manager = onboarding_org(on_registry=False)
    missing = _start(client, organization, manager)
    assert missing.status_code == 400 and "delegator" in missing.json["error"]["details"]["fields"]
    member = make_user()
    add_member(member, organization, "member")
    assert _start(client, organization, member).status_code == 403
    _, stranger = onboarding_org()
    assert _start(client, organization, stranger).status_code == 404
    bare = make_organization("distributor")
    bare_manager = make_user()
    add_member(bare_manager, bare, "manager")
    refused = _start(client, bare, bare_manager)
    assert refused.status_code == 409 and refused.json["error"]["details"]["reason"] == "billing_profile_missing"


def test_the_creation_fills_and_activates_the_envelope_at_the_provider(client, onboarding_org, provider, simulator,
                                                                       runtime):
    organization, manager = onboarding_org(on_registry=False, phone="06 12 34 56 78")  # as typed, not E.164
    delegator = {"firstName": "Paul", "lastName": "Durand", "role": "Président"}
    envelope_id = _start(client, organization, manager, {"delegator": delegator}).json["data"]["signatureRequest"]["id"]
    assert _create(envelope_id, provider, runtime) == "pending_signature"
    envelope = SignatureRequest.get_by_id(envelope_id)
    remote = simulator.store.requests[envelope.provider_signature_request_id]
    assert (remote["delivery_mode"], remote["ordered_signers"], remote["info"], remote["external_id"]) == (
        "email", True, {"locale": "fr"}, envelope_id)
    assert [d["filename"] for d in remote["documents"]] == [
        "framework_contract.pdf", "cgu_acceptance.pdf", "sepa_mandate.pdf", "delegation_proof.pdf"]
    signer = remote["signers"][0]
    assert signer["signature_level"] == "qualified_electronic_signature"
    assert signer["signature_authentication_mode"] is None and signer["info"]["phone_number"] == "+33612345678"
    assert envelope.signature_link == f"{simulator.url}/sign/{envelope.provider_signature_request_id}"
    assert envelope.delegator == delegator
    assert _create(envelope_id, provider, runtime) is None  # a second delivery does nothing

    state = client.simulate_get(f"/api/organizations/{organization.id}/onboarding",
                                headers=signed_in(manager, organization)).json["data"]
    assert state["kybStatus"] is None
    assert state["signatureRequest"]["status"] == "pending_signature"
    assert state["signatureRequest"]["signatureLink"] == envelope.signature_link
    assert not any(d["signedFileStored"] for d in state["signatureRequest"]["documents"])
    early = client.simulate_get(f"/api/organizations/{organization.id}/onboarding/documents/sepa_mandate",
                                headers=signed_in(manager, organization))
    assert early.status_code == 404 and early.json["error"]["code"] == "NOT_FOUND"

    requests.post(f"{simulator.url}/_control/signature_requests/{envelope.provider_signature_request_id}/sign",
                  timeout=5).raise_for_status()  # no callback: the webhooks are lost
    reconciled = client.simulate_get(f"/api/organizations/{organization.id}/onboarding",
                                     params={"reconcile": "true"}, headers=signed_in(manager, organization))
    assert reconciled.json["data"]["signatureRequest"]["status"] == "signed"
    assert OutboxMessage.select().where(OutboxMessage.actor_name == "store_signed_documents").count() == 1
    assert documents.store_signed_documents(envelope_id, provider=provider, storage=runtime.storage) == 5
    assert documents.store_signed_documents(envelope_id, provider=provider, storage=runtime.storage) == 0
    stored = SignatureDocument.get(SignatureDocument.signature_request == envelope_id,
                                   SignatureDocument.document_type == "sepa_mandate")
    assert b"signed at esign simulator" in runtime.storage.read_bytes(documents.SIGNED_CONTEXT,
                                                                       stored.signed_storage_key)
    trail_key = SignatureRequest.get_by_id(envelope_id).audit_trail_storage_key
    assert runtime.storage.read_bytes(documents.SIGNED_CONTEXT, trail_key).startswith(b"%PDF")
    state = client.simulate_get(f"/api/organizations/{organization.id}/onboarding",
                                headers=signed_in(manager, organization)).json["data"]["signatureRequest"]
    assert state["auditTrailStored"] and all(d["signedFileStored"] for d in state["documents"])
    for name in ("sepa_mandate", "audit_trail"):
        pdf = client.simulate_get(f"/api/organizations/{organization.id}/onboarding/documents/{name}",
                                  headers=signed_in(manager, organization))
        assert pdf.status_code == 200 and pdf.headers["content-type"] == "application/pdf"
        assert pdf.content.startswith(b"%PDF") and f'filename="{name}.pdf"' in pdf.headers["content-disposition"]
    _, stranger = onboarding_org()
    assert client.simulate_get(f"/api/organizations/{organization.id}/onboarding/documents/audit_trail",
                               headers=signed_in(stranger)).status_code == 404


def test_a_provider_failure_leaves_an_error_with_its_reason_and_a_new_start_relaunches(
        client, onboarding_org, provider, simulator, runtime):
    organization, manager = onboarding_org()
    envelope_id = _start(client, organization, manager).json["data"]["signatureRequest"]["id"]
    requests.post(f"{simulator.url}/_control/faults", json={"unauthorized": True}, timeout=5)
    assert _create(envelope_id, provider, runtime) == "error"
    envelope = SignatureRequest.get_by_id(envelope_id)
    assert "provider credentials are invalid" in envelope.error_reason
    assert not envelopes.has_pending_envelope(organization.id)
    requests.post(f"{simulator.url}/_control/faults", json={"unauthorized": False}, timeout=5)
    relaunched = _start(client, organization, manager)
    assert relaunched.status_code == 201
    assert _create(relaunched.json["data"]["signatureRequest"]["id"], provider, runtime) == "pending_signature"


def test_the_schedule_reconciles_only_envelopes_pending_for_over_an_hour(provider, simulator, onboarding_org):
    from datetime import timedelta

    from backend import clock

    old_pid, fresh_pid = live_request(provider), live_request(provider)
    rows = {}
    for pid, age in ((old_pid, timedelta(hours=2)), (fresh_pid, timedelta(minutes=5))):
        organization, _ = onboarding_org()
        rows[pid] = SignatureRequest.create(
            organization=organization.id, status="pending_signature", provider_signature_request_id=pid,
            identity_verification_policy="qualified", signature_level="qualified_electronic_signature",
            signer_on_registry_extract=True, status_changed_at=clock.now() - age)
        requests.post(f"{simulator.url}/_control/signature_requests/{pid}/sign", timeout=5).raise_for_status()
    counts = reconciliation.reconcile_pending(older_than_seconds=3600, provider=provider)
    assert counts == {"checked": 1, "moved": 1, "failed": 0}
    assert SignatureRequest.get_by_id(rows[old_pid].id).status == "signed"
    assert SignatureRequest.get_by_id(rows[fresh_pid].id).status == "pending_signature"


def test_a_failure_after_the_provider_creation_keeps_its_id_and_says_why(client, onboarding_org, provider,
                                                                         simulator, runtime):
    organization, manager = onboarding_org()
    envelope_id = _start(client, organization, manager).json["data"]["signatureRequest"]["id"]
    requests.post(f"{simulator.url}/_control/faults", json={"reject_uploads": True}, timeout=5)
    assert _create(envelope_id, provider, runtime) == "error"
    envelope = SignatureRequest.get_by_id(envelope_id)
    assert envelope.provider_signature_request_id in simulator.store.requests
    assert envelope.error_reason.startswith("ProviderRejected: ") and "HTTP 400" in envelope.error_reason
    assert not simulator.store.requests[envelope.provider_signature_request_id]["documents"]


def test_a_printer_envelope_is_delivered_in_app_with_its_signature_link(client, onboarding_org, provider,
                                                                       simulator, runtime):
    organization, manager = onboarding_org(actor_type="printer")
    envelope_id = _start(client, organization, manager).json["data"]["signatureRequest"]["id"]
    assert _create(envelope_id, provider, runtime) == "pending_signature"
    envelope = SignatureRequest.get_by_id(envelope_id)
    assert envelope.delivery_mode == "none"
    assert simulator.store.requests[envelope.provider_signature_request_id]["delivery_mode"] == "none"
    assert envelope.signature_link == f"{simulator.url}/sign/{envelope.provider_signature_request_id}"


def test_a_lost_activation_answer_is_recovered_from_the_provider(client, onboarding_org, provider, runtime):
    organization, manager = onboarding_org()
    envelope_id = _start(client, organization, manager).json["data"]["signatureRequest"]["id"]
    assert _create(envelope_id, provider, runtime) == "pending_signature"
    # The previous run activated the request but died before saving what the provider answered.
    SignatureRequest.update(status="pending_creation", signature_link=None).where(
        SignatureRequest.id == envelope_id).execute()
    assert _create(envelope_id, provider, runtime) == "pending_signature"
    assert SignatureRequest.get_by_id(envelope_id).signature_link is not None


def test_a_second_delivery_during_the_creation_is_retried_later(client, onboarding_org, provider, runtime):
    organization, manager = onboarding_org()
    envelope_id = _start(client, organization, manager).json["data"]["signatureRequest"]["id"]
    held, release = threading.Event(), threading.Event()

    def first_delivery() -> None:
        with database.connection_context(), envelopes._creation_lock(envelope_id):
            held.set()
            release.wait(10)

    thread = threading.Thread(target=first_delivery)
    thread.start()
    try:
        assert held.wait(10)
        with pytest.raises(envelopes.CreationInProgress):
            _create(envelope_id, provider, runtime)
    finally:
        release.set()
        thread.join(10)
    assert SignatureRequest.get_by_id(envelope_id).status == "pending_creation"
