"""The issue's "done when": a new user signs up, creates an industrial organization, fills its
billing profile, invites a colleague who accepts, and sees its workspace blocked until KYB
approval; an admin created from the command line lists organizations and security audits."""

from __future__ import annotations

from backend.identity.admin_users import ensure_admin
from backend.identity.models import KybStatus, Organization
from tests.factories import random_siren, signed_in
from tests.identity.helpers import cookie_header, cookie_of, last_email, token_in, verify_email
from tests.identity.test_organizations import billing_body


def test_from_sign_up_to_an_approved_workspace(client):
    signed_up = client.simulate_post("/api/auth/sign-up", json={"email": "ines@example.com",
                                                                 "password": "mot-de-passe-ines", "name": "Inès"})
    ines = cookie_header(cookie_of(signed_up))
    assert verify_email(client, "ines@example.com", ines).status_code == 200
    siren = random_siren()
    created = client.simulate_post("/api/organizations", headers=ines,
                                   json={"actorType": "industrial", "siren": siren, "legalName": "Laiterie Inès"})
    organization_id = created.json["data"]["organization"]["id"]
    assert client.simulate_put(f"/api/organizations/{organization_id}/billing-profile", headers=ines,
                               json=billing_body(siren)).status_code == 200
    invited = client.simulate_post(f"/api/organizations/{organization_id}/invitations", headers=ines,
                                   json={"email": "paul@example.com", "role": "member"})
    assert invited.status_code == 201
    paul_signed_up = client.simulate_post("/api/auth/sign-up", json={"email": "paul@example.com",
                                                                      "password": "mot-de-passe-paul", "name": "Paul"})
    paul = cookie_header(cookie_of(paul_signed_up))
    assert verify_email(client, "paul@example.com", paul).status_code == 200
    token = token_in(last_email("paul@example.com", "invitation"))
    assert client.simulate_post(f"/api/invitations/{token}/accept", headers=paul).status_code == 200

    for headers in (ines, paul):
        session = client.simulate_get("/api/auth/session", headers=headers).json["data"]
        assert session["workspace"] == {"home": "/industrial", "redirectTo": "/onboarding"}
        blocked = client.simulate_get("/api/workspace/resolve", params={"path": "/industrial/reservations"},
                                      headers=headers).json["data"]
        assert blocked == {"allowed": False, "redirectTo": "/onboarding"}
    submitted = client.simulate_post(f"/api/organizations/{organization_id}/kyb/submit", headers=ines)
    assert submitted.json["data"]["organization"]["kybStatus"] == "submitted"

    # The admin review endpoint belongs to the onboarding issue; it sets this status.
    Organization.update(kyb_status=KybStatus.APPROVED).where(Organization.id == organization_id).execute()
    opened = client.simulate_get("/api/workspace/resolve", params={"path": "/industrial/reservations"},
                                 headers=paul).json["data"]
    assert opened == {"allowed": True, "redirectTo": None}

    admin, _ = ensure_admin(email="root@example.com", password="mot-de-passe-root")
    admin_headers = signed_in(admin)
    listed = client.simulate_get("/api/admin/organizations", params={"search": siren}, headers=admin_headers)
    assert [item["id"] for item in listed.json["data"]["items"]] == [organization_id]
    audits = client.simulate_get("/api/admin/audit/security", params={"targetId": organization_id},
                                 headers=admin_headers).json["data"]
    assert {"organization.created", "organization.invitation.created", "organization.invitation.accepted",
            "kyb.submitted"} <= {item["event"] for item in audits["items"]}
