"""Verification policies: the admin's override per organization and document type (audited), its
effect on the next onboarding envelope, and the default policy with the configured threshold."""

from __future__ import annotations

from backend.audit import SecurityEvent
from backend.onboarding.models import SignatureRequest
from tests.factories import make_admin, make_organization, make_user, signed_in

BASE = "/api/admin/organizations/{}/verification-policies"


def _put(client, headers, organization_id: str, document_type: str, policy: str, note: str = "dossier papier"):
    return client.simulate_put(f"{BASE.format(organization_id)}/{document_type}", json={"policy": policy, "note": note},
                               headers=headers)


def _start(client, organization, manager):
    return client.simulate_post(f"/api/organizations/{organization.id}/onboarding/start", json={},
                                headers=signed_in(manager, organization))


def test_an_admin_sets_lists_and_removes_an_override_and_each_change_is_audited(client):
    admin = make_admin()
    headers = signed_in(admin)
    organization = make_organization()
    first = _put(client, headers, organization.id, "sepa_mandate", "required")
    assert first.status_code == 200
    assert first.json["data"]["override"] | {"setAt": None} == {
        "documentType": "sepa_mandate", "policy": "required", "note": "dossier papier", "setByUserId": admin.id,
        "setAt": None}
    assert _put(client, headers, organization.id, "sepa_mandate", "none", note="mandat papier signé").status_code == 200
    listed = client.simulate_get(BASE.format(organization.id), headers=headers).json["data"]
    assert listed["organizationId"] == organization.id
    assert [(o["documentType"], o["policy"]) for o in listed["overrides"]] == [("sepa_mandate", "none")]
    removed = client.simulate_delete(f"{BASE.format(organization.id)}/sepa_mandate", headers=headers).json["data"]
    assert removed == {"documentType": "sepa_mandate", "removed": True}
    again = client.simulate_delete(f"{BASE.format(organization.id)}/sepa_mandate", headers=headers).json["data"]
    assert again["removed"] is False
    trail = [(e.event, e.actor_user_id, e.target_id, e.details) for e in SecurityEvent.select().where(
        SecurityEvent.event.startswith("onboarding.verification_policy")).order_by(SecurityEvent.id)]
    assert trail == [
        ("onboarding.verification_policy.overridden", admin.id, organization.id,
         {"documentType": "sepa_mandate", "policy": "required", "note": "dossier papier", "previousPolicy": None}),
        ("onboarding.verification_policy.overridden", admin.id, organization.id,
         {"documentType": "sepa_mandate", "policy": "none", "note": "mandat papier signé",
          "previousPolicy": "required"}),
        ("onboarding.verification_policy.override_removed", admin.id, organization.id,
         {"documentType": "sepa_mandate", "previousPolicy": "none"}),
    ]


def test_override_refusals(client):
    headers = signed_in(make_admin())
    organization = make_organization()
    unknown_type = _put(client, headers, organization.id, "passport", "none")
    assert unknown_type.status_code == 400 and "documentType" in unknown_type.json["error"]["details"]["fields"]
    bad = client.simulate_put(f"{BASE.format(organization.id)}/sepa_mandate", json={"policy": "maximal"},
                              headers=headers)
    assert bad.status_code == 400 and set(bad.json["error"]["details"]["fields"]) == {"policy", "note"}
    assert _put(client, headers, "industrial:000000000", "sepa_mandate", "none").status_code == 404
    assert _put(client, signed_in(make_user()), organization.id, "sepa_mandate", "none").status_code == 403


def test_overrides_apply_to_the_next_envelope_whose_signer_gets_the_strongest_policy(client, onboarding_org,
                                                                                      provider, simulator, runtime):
    from backend.onboarding import envelopes

    headers = signed_in(make_admin())
    organization, manager = onboarding_org()
    _put(client, headers, organization.id, "cgu_acceptance", "none")
    mixed = _start(client, organization, manager).json["data"]["signatureRequest"]
    assert [(d["type"], d["identityVerificationPolicy"], d["signatureLevel"]) for d in mixed["documents"]] == [
        ("framework_contract", "qualified", "qualified_electronic_signature"),
        ("cgu_acceptance", "none", "qualified_electronic_signature"),
        ("sepa_mandate", "qualified", "qualified_electronic_signature")]
    SignatureRequest.update(status="error").where(SignatureRequest.id == mixed["id"]).execute()

    for document_type in ("framework_contract", "cgu_acceptance", "sepa_mandate"):
        _put(client, headers, organization.id, document_type, "required")
    lowered = _start(client, organization, manager).json["data"]["signatureRequest"]
    assert {(d["identityVerificationPolicy"], d["signatureLevel"], d["authenticationMode"])
            for d in lowered["documents"]} == {("required", "advanced_electronic_signature", "otp_sms")}
    assert envelopes.create_signature_envelope(lowered["id"], provider=provider, storage=runtime.storage,
                                               config=runtime.config) == "pending_signature"
    envelope = SignatureRequest.get_by_id(lowered["id"])
    assert envelope.identity_verification_policy == "required"
    signer = simulator.store.requests[envelope.provider_signature_request_id]["signers"][0]
    assert (signer["signature_level"], signer["signature_authentication_mode"], signer["info"]["phone_number"]) == (
        "advanced_electronic_signature", "otp_sms", "+33612345678")
