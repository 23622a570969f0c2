"""KYB review and its approval gate, and the admin back-office of onboarding envelopes."""

from __future__ import annotations

from datetime import timedelta

import pytest
import urllib3

from backend import clock
from backend.audit import SecurityEvent
from backend.identity.models import Organization
from backend.onboarding.models import KybDocument, SignatureRequest
from tests.factories import add_billing_profile, add_member, make_admin, make_organization, make_user, signed_in
from tests.onboarding.conftest import live_request


def _envelope(organization_id: str, status: str, *, on_registry: bool = True, age=timedelta(0)) -> SignatureRequest:
    return SignatureRequest.create(
        organization=organization_id, status=status, identity_verification_policy="qualified",
        signature_level="qualified_electronic_signature", signer_on_registry_extract=on_registry,
        created_at=clock.now() - age, status_changed_at=clock.now() - age)


@pytest.fixture
def reviewer():
    admin = make_admin()
    return admin, signed_in(admin)


def _review(client, headers, organization_id: str, status: str, note: str = "vu"):
    return client.simulate_post(f"/api/admin/organizations/{organization_id}/review",
                                json={"status": status, "note": note}, headers=headers)


def test_approval_is_refused_until_the_envelope_is_signed(client, reviewer):
    admin, headers = reviewer
    organization = make_organization(kyb_status="submitted")
    add_billing_profile(organization)
    refused = _review(client, headers, organization.id, "approved")
    assert refused.status_code == 409 and refused.json["error"]["code"] == "CONFLICT"
    assert refused.json["error"]["details"] == {"reason": "onboarding_not_signed", "onboardingStatus": None}
    _envelope(organization.id, "signer_opened")
    assert _review(client, headers, organization.id, "approved").json["error"]["details"]["onboardingStatus"] == (
        "signer_opened")
    SignatureRequest.update(status="signed").execute()
    approved = _review(client, headers, organization.id, "approved", note="dossier complet")
    assert approved.status_code == 200
    assert approved.json["data"]["organization"]["kybStatus"] == "approved"
    event = SecurityEvent.get(SecurityEvent.event == "kyb.company.reviewed")
    assert (event.actor_user_id, event.target_id) == (admin.id, organization.id)
    assert event.details == {"status": "approved", "note": "dossier complet", "previousStatus": "submitted"}


def test_a_delegated_signer_needs_the_three_delegation_documents(client, reviewer):
    _, headers = reviewer
    organization = make_organization(kyb_status="in_review")
    add_billing_profile(organization, signer_on_registry_extract=False)
    _envelope(organization.id, "signed", on_registry=False)
    refused = _review(client, headers, organization.id, "approved")
    assert refused.json["error"]["details"] == {"reason": "delegation_documents_missing", "missing": [
        "delegation_letter", "delegator_id_document", "delegate_id_document"]}
    for document_type in ("delegation_letter", "delegator_id_document", "delegate_id_document"):
        KybDocument.create(organization=organization.id, document_type=document_type,
                           storage_key=f"k/{document_type}.pdf", content_type="application/pdf", size_bytes=10)
    assert _review(client, headers, organization.id, "approved").status_code == 200


def test_approval_needs_the_legal_name_and_postal_address_an_invoice_prints(client, reviewer):
    _, headers = reviewer
    organization = make_organization(kyb_status="in_review", legal_name="")
    _envelope(organization.id, "signed")
    refused = _review(client, headers, organization.id, "approved")  # no billing profile at all
    assert refused.status_code == 409 and refused.json["error"]["code"] == "CONFLICT"
    assert refused.json["error"]["details"] == {"reason": "billing_identity_incomplete", "missing": [
        "legalName", "address.street", "address.postalCode", "address.city"]}
    profile = add_billing_profile(organization, legal_name="Fromagerie des Alpes SAS", street="  ")
    refused = _review(client, headers, organization.id, "approved")
    assert refused.json["error"]["details"] == {"reason": "billing_identity_incomplete", "missing": ["address.street"]}
    assert Organization.get_by_id(organization.id).kyb_status == "in_review"
    profile.street = "12 rue des Lilas"
    profile.save()
    assert _review(client, headers, organization.id, "approved").status_code == 200


def test_rejection_is_always_possible_and_review_needs_an_admin(client, reviewer):
    _, headers = reviewer
    organization = make_organization(kyb_status="submitted")
    rejected = _review(client, headers, organization.id, "rejected", note="Kbis illisible")
    assert rejected.json["data"]["organization"] == {
        "id": organization.id, "kybStatus": "rejected", "kybNote": "Kbis illisible",
        "kybReviewedAt": rejected.json["data"]["organization"]["kybReviewedAt"]}
    assert _review(client, signed_in(make_user()), organization.id, "rejected").status_code == 403
    assert _review(client, headers, "industrial:000000000", "rejected").status_code == 404
    invalid = client.simulate_post(f"/api/admin/organizations/{organization.id}/review",
                                   json={"status": "submitted"}, headers=headers)
    assert invalid.status_code == 400 and set(invalid.json["error"]["details"]["fields"]) == {"status", "note"}


def test_admin_lists_envelopes_and_pending_approvals(client, reviewer):
    _, headers = reviewer
    waiting = make_organization(kyb_status="submitted", legal_name="Alpha Fromages")
    _envelope(waiting.id, "signed")
    make_organization(kyb_status="approved")
    other = make_organization(kyb_status="in_review", legal_name="Beta Biscuits")
    _envelope(other.id, "error")
    envelopes = client.simulate_get("/api/admin/onboarding/signature-requests",
                                    params={"status": "error", "sortBy": "createdAt"}, headers=headers).json["data"]
    assert [(i["organizationId"], i["organizationName"]) for i in envelopes["items"]] == [(other.id, "Beta Biscuits")]
    assert envelopes["total"] == 1 and envelopes["pageSize"] == 25
    pending = client.simulate_get("/api/admin/approvals/pending", params={"sortBy": "legalName"},
                                  headers=headers).json["data"]
    assert [(i["id"], i["onboardingStatus"]) for i in pending["items"]] == [(waiting.id, "signed"),
                                                                           (other.id, "error")]
    bad_sort = client.simulate_get("/api/admin/approvals/pending", params={"sortBy": "kyb_status; drop"},
                                   headers=headers)
    assert bad_sort.status_code == 400


def test_relaunch_replaces_failed_and_stale_envelopes_only(client, reviewer, onboarding_org, provider):
    _, headers = reviewer
    failed_org, _ = onboarding_org()
    failed = _envelope(failed_org.id, "error")
    stale_org, _ = onboarding_org()
    stale = _envelope(stale_org.id, "pending_signature", age=timedelta(days=8))
    fresh_org, _ = onboarding_org()
    _envelope(fresh_org.id, "signer_opened")
    superseded_org, _ = onboarding_org()
    older = _envelope(superseded_org.id, "expired", age=timedelta(days=2))
    _envelope(superseded_org.id, "signed")
    answer = client.simulate_post("/api/admin/onboarding/signature-requests/relaunch", json={},
                                  headers=headers).json["data"]
    assert sorted(r["id"] for r in answer["relaunched"]) == sorted([failed.id, stale.id])
    assert answer["skipped"] == [{"id": older.id, "reason": "superseded"}] and answer["failed"] == []
    assert SignatureRequest.get_by_id(stale.id).status == "canceled"
    new_ids = [r["newSignatureRequestId"] for r in answer["relaunched"]]
    assert {SignatureRequest.get_by_id(i).status for i in new_ids} == {"pending_creation"}
    assert SecurityEvent.select().where(SecurityEvent.event == "onboarding.signature_request.relaunched").count() == 2


def test_reset_onboarding_invalidates_every_envelope_and_clears_kyb(client, reviewer):
    admin, headers = reviewer
    organization = make_organization(kyb_status="approved")
    _envelope(organization.id, "signed")
    answer = client.simulate_post(f"/api/admin/organizations/{organization.id}/reset-onboarding", headers=headers)
    assert answer.json["data"] == {"organizationId": organization.id, "invalidated": 1, "kybStatus": None}
    assert {e.status for e in SignatureRequest.select()} == {"invalidated"}
    assert Organization.get_by_id(organization.id).kyb_status is None
    assert SecurityEvent.get(SecurityEvent.event == "onboarding.reset").actor_user_id == admin.id
    assert _review(client, headers, organization.id, "approved").json["error"]["details"]["reason"] == (
        "onboarding_not_signed")


def _upload(client, organization, user, document_type: str, content: bytes, filename: str = "doc.pdf"):
    body, content_type = urllib3.encode_multipart_formdata(
        {"type": document_type, "file": (filename, content, "application/octet-stream")})
    return client.simulate_post(f"/api/organizations/{organization.id}/kyb/documents", body=body,
                                headers={**signed_in(user, organization), "Content-Type": content_type})


def test_delegation_documents_upload_then_unlock_approval(client, reviewer, onboarding_org):
    _, headers = reviewer
    organization, manager = onboarding_org(on_registry=False)
    Organization.update(kyb_status="submitted").where(Organization.id == organization.id).execute()
    _envelope(organization.id, "signed", on_registry=False)
    pdf, png, jpeg = b"%PDF-1.4 letter", b"\x89PNG\r\n\x1a\n....", b"\xff\xd8\xff\xe0 id"
    first = _upload(client, organization, manager, "delegation_letter", b"%PDF-1.4 first")
    assert first.status_code == 201, first.json
    assert first.json["data"]["document"]["contentType"] == "application/pdf"
    assert _upload(client, organization, manager, "delegation_letter", pdf).status_code == 201  # replaces
    assert _upload(client, organization, manager, "delegator_id_document", png, "id.png").status_code == 201
    assert _review(client, headers, organization.id, "approved").json["error"]["details"]["missing"] == [
        "delegate_id_document"]
    assert _upload(client, organization, manager, "delegate_id_document", jpeg, "id.jpg").status_code == 201
    assert KybDocument.select().where(KybDocument.organization == organization.id).count() == 3
    assert _review(client, headers, organization.id, "approved").status_code == 200


def test_delegation_document_refusals(client, onboarding_org):
    organization, manager = onboarding_org()
    tiff = _upload(client, organization, manager, "delegation_letter", b"II*\x00tiff")
    assert tiff.status_code == 400 and "file" in tiff.json["error"]["details"]["fields"]
    unknown = _upload(client, organization, manager, "passport", b"%PDF-1.4")
    assert unknown.status_code == 400 and "type" in unknown.json["error"]["details"]["fields"]
    too_big = _upload(client, organization, manager, "delegation_letter", b"%PDF-" + b"0" * (10 * 1024 * 1024))
    assert too_big.status_code == 413
    member = make_user()
    add_member(member, organization, "member")
    assert _upload(client, organization, member, "delegation_letter", b"%PDF-1.4").status_code == 403


def test_a_pending_envelope_redirects_the_workspace(client, onboarding_org):
    organization, manager = onboarding_org()
    headers = signed_in(manager, organization)
    assert client.simulate_post(f"/api/organizations/{organization.id}/onboarding/start", json={},
                                headers=headers).status_code == 201
    workspace = client.simulate_get("/api/auth/session", headers=headers).json["data"]["workspace"]
    assert workspace["redirectTo"] == "/onboarding-signature-pending"


def test_relaunch_and_reset_cancel_pending_requests_at_the_provider(client, reviewer, onboarding_org, provider,
                                                                    simulator):
    _, headers = reviewer
    relaunched_org, _ = onboarding_org()
    relaunched_pid = live_request(provider)
    pending = _envelope(relaunched_org.id, "signer_opened")
    SignatureRequest.update(provider_signature_request_id=relaunched_pid).where(
        SignatureRequest.id == pending.id).execute()
    answer = client.simulate_post("/api/admin/onboarding/signature-requests/relaunch",
                                  json={"signatureRequestIds": [pending.id]}, headers=headers).json["data"]
    assert [r["id"] for r in answer["relaunched"]] == [pending.id]
    assert simulator.store.requests[relaunched_pid]["status"] == "canceled"
    assert SignatureRequest.get_by_id(pending.id).error_reason == "relaunched"

    reset_org, _ = onboarding_org()
    reset_pid = live_request(provider)
    _envelope(reset_org.id, "signed")
    live = _envelope(reset_org.id, "pending_signature")
    SignatureRequest.update(provider_signature_request_id=reset_pid).where(SignatureRequest.id == live.id).execute()
    reset = client.simulate_post(f"/api/admin/organizations/{reset_org.id}/reset-onboarding", headers=headers)
    assert reset.json["data"]["invalidated"] == 2
    assert simulator.store.requests[reset_pid]["status"] == "canceled"
    assert {e.status for e in SignatureRequest.select().where(SignatureRequest.organization == reset_org.id)} == {
        "invalidated"}


def test_a_relaunch_that_cannot_open_a_new_envelope_leaves_the_provider_request_alone(client, reviewer,
                                                                                       onboarding_org, provider,
                                                                                       simulator):
    from backend.identity.models import BillingProfile

    _, headers = reviewer
    organization, _ = onboarding_org()
    pid = live_request(provider)
    pending = _envelope(organization.id, "pending_signature")
    SignatureRequest.update(provider_signature_request_id=pid).where(SignatureRequest.id == pending.id).execute()
    BillingProfile.update(iban=None).where(BillingProfile.organization == organization.id).execute()
    answer = client.simulate_post("/api/admin/onboarding/signature-requests/relaunch",
                                  json={"signatureRequestIds": [pending.id]}, headers=headers).json["data"]
    assert answer["relaunched"] == [] and [f["id"] for f in answer["failed"]] == [pending.id]
    assert "IBAN" in answer["failed"][0]["reason"]
    assert simulator.store.requests[pid]["status"] == "ongoing"
    assert SignatureRequest.get_by_id(pending.id).status == "pending_signature"
