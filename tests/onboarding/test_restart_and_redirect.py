"""A started onboarding cannot be restarted once signed or approved (unless an admin reset it), and
a pending envelope redirects every gated workspace, the printer's included."""

from __future__ import annotations

from backend.identity.models import Organization
from backend.onboarding.models import SignatureRequest
from tests.factories import make_admin, signed_in


def _start(client, organization, manager):
    return client.simulate_post(f"/api/organizations/{organization.id}/onboarding/start", json={},
                                headers=signed_in(manager, organization))


def test_a_signed_or_approved_onboarding_cannot_be_restarted_until_an_admin_resets_it(client, onboarding_org):
    organization, manager = onboarding_org()
    first = _start(client, organization, manager).json["data"]["signatureRequest"]["id"]
    SignatureRequest.update(status="signed").where(SignatureRequest.id == first).execute()
    refused = _start(client, organization, manager)
    assert refused.status_code == 409, refused.json
    assert refused.json["error"]["details"]["reason"] == "onboarding_signed"
    assert SignatureRequest.select().where(SignatureRequest.organization == organization.id).count() == 1

    Organization.update(kyb_status="approved").where(Organization.id == organization.id).execute()
    SignatureRequest.update(status="expired").where(SignatureRequest.id == first).execute()
    approved = _start(client, organization, manager)
    assert approved.status_code == 409 and approved.json["error"]["details"]["reason"] == "kyb_approved"

    admin = make_admin()
    reset = client.simulate_post(f"/api/admin/organizations/{organization.id}/reset-onboarding",
                                 headers=signed_in(admin))
    assert reset.status_code == 200
    assert _start(client, organization, manager).status_code == 201


def test_a_pending_envelope_redirects_the_printer_workspace_too(client, onboarding_org):
    organization, manager = onboarding_org(actor_type="printer")
    assert _start(client, organization, manager).status_code == 201
    headers = signed_in(manager, organization)
    session = client.simulate_get("/api/auth/session", headers=headers).json["data"]
    assert session["workspace"]["redirectTo"] == "/onboarding-signature-pending"
    for path in ("/printer", "/printer/commandes/PM-0001"):
        resolved = client.simulate_get("/api/workspace/resolve", params={"path": path}, headers=headers)
        assert resolved.json["data"] == {"allowed": False, "redirectTo": "/onboarding-signature-pending"}, path
    SignatureRequest.update(status="signed").where(SignatureRequest.organization == organization.id).execute()
    resolved = client.simulate_get("/api/workspace/resolve", params={"path": "/printer"}, headers=headers)
    assert resolved.json["data"] == {"allowed": True, "redirectTo": None}
