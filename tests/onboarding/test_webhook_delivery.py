"""Webhooks over real HTTP with a real worker: concurrent replays, and the simulator driving an
envelope to `signed` through duplicated, reversed deliveries."""

from __future__ import annotations

import threading

import pytest
import requests

from backend import events as domain_events
from backend.db import database
from backend.documents.seeding import seed_default_versions
from backend.onboarding.documents import SIGNED_CONTEXT
from backend.onboarding.models import ProcessingStatus, SignatureDocument, SignatureEvent, SignatureRequest
from backend.outbox import OutboxMessage
from tests.factories import make_admin, make_organization, random_siren, siret_for
from tests.identity.helpers import last_email, token_in
from tests.onboarding.conftest import (
    event_body,
    fast_client,
    hand_to_worker,
    prepared_request,
    signed_headers,
    wait_until,
)

pytestmark = pytest.mark.committed


@pytest.fixture
def connection():
    with database.connection_context():
        yield


class Published:
    """Event ids as `onboarding.signature_event_processed` publishes them (one row per processing),
    read from the outbox each time they are looked at."""

    def _ids(self) -> list[str]:
        subscriber = domain_events.SUBSCRIBERS[domain_events.SIGNATURE_EVENT_PROCESSED][0]
        return [message.args[0] for message in OutboxMessage.select(OutboxMessage.args)
                .where(OutboxMessage.actor_name == subscriber).order_by(OutboxMessage.id)]

    def __iter__(self):
        return iter(self._ids())

    def __len__(self) -> int:
        return len(self._ids())

    def __eq__(self, other: object) -> bool:
        return self._ids() == other

    __hash__ = None


@pytest.fixture
def processed():
    return Published()


def _envelope(pid: str, status: str = "pending_signature") -> SignatureRequest:
    return SignatureRequest.create(
        organization=make_organization().id, status=status, provider_signature_request_id=pid,
        identity_verification_policy="qualified", signature_level="qualified_electronic_signature",
        signer_on_registry_extract=True)


def test_the_same_event_delivered_20_times_concurrently_is_stored_and_processed_once(
        api_server, provider, broker, worker, connection, processed):
    envelope = _envelope("prov-concurrent", status="signer_notified")
    body = event_body("signer.link_opened", "prov-concurrent", event_id="evt-concurrent")
    start = threading.Barrier(20)
    answers: list[dict] = []

    def deliver(attempt: int) -> None:
        start.wait()
        answer = requests.post(f"{api_server}/api/webhooks/esign", data=body,
                               headers=signed_headers(body, retry=attempt), timeout=30)
        answers.append({"status": answer.status_code, **answer.json()["data"]})

    threads = [threading.Thread(target=deliver, args=(n,)) for n in range(1, 21)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(answers) == 20 and {a["status"] for a in answers} == {200}
    assert sorted(a["duplicate"] for a in answers) == [False] + [True] * 19
    wait_until(lambda: processed)
    broker.join("webhooks", timeout=10_000)
    worker.join()
    assert processed == ["evt-concurrent"]
    assert SignatureEvent.select().count() == 1
    assert OutboxMessage.select().where(OutboxMessage.actor_name == "process_signature_event").count() == 1
    event = SignatureEvent.get(SignatureEvent.event_id == "evt-concurrent")
    assert event.processing_status == ProcessingStatus.PROCESSED and event.processed_at is not None
    assert SignatureRequest.get_by_id(envelope.id).status == "signer_opened"


def test_the_simulator_drives_an_envelope_to_signed_through_duplicated_reversed_webhooks(
        api_server, make_simulator, broker, worker, connection, processed):
    simulator = make_simulator(callback_url=api_server)
    client = fast_client(simulator.api_url)
    restore = hand_to_worker(esign=client)
    try:
        pid = prepared_request(client)
        envelope = _envelope(pid, status="draft")
        client.activate(pid)
        wait_until(lambda: _status(envelope) == "pending_signature")
        control = f"{simulator.url}/_control"
        requests.post(f"{control}/faults", json={"duplicate_webhooks": True, "reverse_webhooks": True}, timeout=5)
        requests.post(f"{control}/signature_requests/{pid}/sign", timeout=5).raise_for_status()
        wait_until(lambda: _status(envelope) == "signed")
        requests.post(f"{control}/signature_requests/{pid}/emit", json={"event_name": "signer.link_opened"},
                      timeout=5)
        wait_until(lambda: SignatureEvent.select().count() == 4 and simulator.sender.idle())
        wait_until(lambda: len(processed) == 4)
    finally:
        restore()
    assert _status(envelope) == "signed"
    names = [e.event_name for e in SignatureEvent.select().order_by(SignatureEvent.id)]
    assert names == ["signature_request.activated", "signature_request.done", "signer.done", "signer.link_opened"]
    assert sorted(processed) == sorted(e.event_id for e in SignatureEvent.select())
    deliveries = requests.get(f"{control}/deliveries", timeout=5).json()["deliveries"]
    assert len(deliveries) == 7 and {d["status"] for d in deliveries} == {200}  # 1 + 2 x 2 + 2 x 1


def _status(envelope: SignatureRequest) -> str:
    return SignatureRequest.get_by_id(envelope.id).status


def test_onboarding_end_to_end_over_http_from_sign_up_to_kyb_approval(
        api_server, make_simulator, broker, worker, connection, runtime, registry_sim):
    """Sign-up, organization, billing profile, start; the worker creates the envelope at the
    simulator, whose webhooks move it; approval is refused before the signature and without the
    delegation documents; the signer page signs; the signed files are stored; an admin approves."""
    seed_default_versions(runtime.storage)  # committed: the worker renders with them
    simulator = make_simulator(callback_url=api_server)
    restore = hand_to_worker(esign=fast_client(simulator.api_url))
    user, admin = requests.Session(), requests.Session()
    try:
        assert user.post(f"{api_server}/api/auth/sign-up", timeout=30, json={
            "email": "camille.e2e@example.com", "password": "signature-e2e-pass", "name": "Camille Martin",
        }).status_code == 201
        verification = token_in(last_email("camille.e2e@example.com", "email_verification"))
        assert user.post(f"{api_server}/api/auth/email-verification/confirm", timeout=30,
                         json={"token": verification}).status_code == 200
        siren = random_siren()
        # The registry lists Paul Durand, not the signer: the delegation documents are required.
        registry_sim.add_company({"siren": siren, "legalName": "Fromagerie du Lac", "address": {
            "street": "3 rue du Lac", "postalCode": "74000", "city": "Annecy"},
            "representatives": [{"firstName": "Paul", "lastName": "Durand", "role": "Président de SAS"}]})
        created = user.post(f"{api_server}/api/organizations", timeout=30, json={
            "actorType": "industrial", "siren": siren, "legalName": "Fromagerie du Lac SAS"})
        assert created.status_code == 201
        organization = created.json()["data"]["organization"]
        base = f"{api_server}/api/organizations/{organization['id']}"
        profile = user.put(f"{base}/billing-profile", timeout=30, json={
            "legalName": "Fromagerie du Lac SAS", "siret": siret_for(siren),
            "address": {"street": "3 rue du Lac", "postalCode": "74000", "city": "Annecy", "country": "FR"},
            "iban": "FR7630006000011234567890189",
            "signer": {"firstName": "Camille", "lastName": "Martin", "email": "camille.e2e@example.com",
                       "phone": "06 12 34 56 78", "onRegistryExtract": False}})
        assert profile.status_code == 200 and profile.json()["data"]["billingProfile"]["signer"]["phone"] == (
            "+33612345678")
        assert user.post(f"{base}/kyb/submit", timeout=30).status_code == 200
        start = user.post(f"{base}/onboarding/start", timeout=30, json={
            "delegator": {"firstName": "Paul", "lastName": "Durand", "role": "Président"}})
        assert start.status_code == 201, start.text
        envelope = SignatureRequest.get_by_id(start.json()["data"]["signatureRequest"]["id"])
        assert user.get(f"{api_server}/api/auth/session", timeout=30).json()["data"]["workspace"]["redirectTo"] == (
            "/onboarding-signature-pending")
        # The webhooks may move the envelope before the creation actor has saved the signer's link.
        wait_until(lambda: _status(envelope) == "signer_notified" and SignatureRequest.get_by_id(
            envelope.id).signature_link, timeout=30)
        state = user.get(f"{base}/onboarding", timeout=30).json()["data"]["signatureRequest"]
        pid = state["providerSignatureRequestId"]
        assert [d["type"] for d in state["documents"]] == [
            "framework_contract", "cgu_acceptance", "sepa_mandate", "delegation_proof"]
        assert simulator.store.requests[pid]["signers"][0]["info"]["phone_number"] == "+33612345678"

        admin_user = make_admin(password="admin-e2e-password")
        assert admin.post(f"{api_server}/api/auth/sign-in", timeout=30, json={
            "email": admin_user.email, "password": "admin-e2e-password"}).status_code == 200
        review = f"{api_server}/api/admin/organizations/{organization['id']}/review"
        early = admin.post(review, json={"status": "approved", "note": ""}, timeout=30)
        assert early.status_code == 409
        assert early.json()["error"]["details"] == {"reason": "onboarding_not_signed",
                                                    "onboardingStatus": "signer_notified"}

        page = requests.get(state["signatureLink"], timeout=5)  # the signer page the link opens
        assert page.status_code == 200 and f'action="/sign/{pid}/sign"' in page.text
        requests.post(f"{simulator.url}/sign/{pid}/open", timeout=5).raise_for_status()
        wait_until(lambda: _status(envelope) == "signer_opened")
        requests.post(f"{simulator.url}/sign/{pid}/sign", timeout=5).raise_for_status()
        wait_until(lambda: _status(envelope) == "signed")
        wait_until(lambda: SignatureRequest.get_by_id(envelope.id).audit_trail_storage_key)
        signed = user.get(f"{base}/onboarding", timeout=30).json()["data"]["signatureRequest"]
        assert signed["status"] == "signed" and all(d["signedFileStored"] for d in signed["documents"])
        contract = user.get(f"{base}/onboarding/documents/framework_contract", timeout=30)
        assert contract.headers["Content-Type"] == "application/pdf"
        assert b"signed at esign simulator" in contract.content

        missing = admin.post(review, json={"status": "approved", "note": ""}, timeout=30)
        assert missing.status_code == 409 and missing.json()["error"]["details"]["reason"] == (
            "delegation_documents_missing")
        for document_type in ("delegation_letter", "delegator_id_document", "delegate_id_document"):
            assert user.post(f"{base}/kyb/documents", timeout=30, data={"type": document_type},
                             files={"file": ("piece.pdf", b"%PDF-1.4 piece", "application/pdf")}).status_code == 201
        approved = admin.post(review, json={"status": "approved", "note": "dossier complet"}, timeout=30)
        assert approved.status_code == 200 and approved.json()["data"]["organization"]["kybStatus"] == "approved"
        assert user.get(f"{api_server}/api/auth/session", timeout=30).json()["data"]["workspace"]["redirectTo"] is None
    finally:
        restore()
    keys = [d.signed_storage_key for d in SignatureDocument.select().where(
        SignatureDocument.signature_request == envelope.id)]
    assert len(keys) == 4 and all(runtime.storage.exists(SIGNED_CONTEXT, key) for key in keys)
    names = [e.event_name for e in SignatureEvent.select().order_by(SignatureEvent.id)]
    assert names == ["signature_request.activated", "signer.notified", "signer.link_opened", "signer.done",
                     "signature_request.done"]
    assert {e.processing_status for e in SignatureEvent.select()} == {ProcessingStatus.PROCESSED}
