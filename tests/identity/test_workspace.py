"""Workspace routing: `workspace` of the session and `GET /api/workspace/resolve`."""

from __future__ import annotations

import pytest

from backend.identity import workspace
from tests.factories import add_member, make_organization, make_user, signed_in


def caller(kind: str):
    """A user of each kind: admin, printer, approved or pending industrial/distributor, no role."""
    if kind == "admin":
        return make_user(roles=["admin"])
    if kind == "none":
        return make_user()
    actor_type, _, state = kind.partition("-")
    user = make_user()
    add_member(user, make_organization(actor_type, kyb_status="approved" if state == "approved" else None))
    return user


SESSION_TABLE = [
    ("admin", {"home": "/admin", "redirectTo": None}),
    ("printer", {"home": "/printer", "redirectTo": None}),
    ("industrial-approved", {"home": "/industrial", "redirectTo": None}),
    ("industrial-pending", {"home": "/industrial", "redirectTo": "/onboarding"}),
    ("distributor-approved", {"home": "/distributor", "redirectTo": None}),
    ("distributor-pending", {"home": "/distributor", "redirectTo": "/onboarding"}),
    ("none", {"home": None, "redirectTo": "/onboarding"}),
]


@pytest.mark.parametrize(("kind", "expected"), SESSION_TABLE)
def test_session_workspace(client, kind, expected):
    answer = client.simulate_get("/api/auth/session", headers=signed_in(caller(kind)))
    assert answer.json["data"]["workspace"] == expected


RESOLVE_TABLE = [
    ("printer", "/", True, "/printer"),
    ("printer", "/printer/commandes", True, None),
    ("printer", "/industrial/reservations", False, "/printer"),
    ("printer", "/distributor", False, "/printer"),
    ("printer", "/admin/print-orders", False, "/printer"),
    ("printer", "/printer/../admin", False, "/printer"),
    ("industrial-approved", "/industrial/lots/LOT-0001", True, None),
    ("industrial-approved", "/printer", False, "/industrial"),
    ("industrial-approved", "/distributor/stores", False, "/industrial"),
    ("industrial-approved", "/admin", False, "/industrial"),
    ("industrial-approved", "/industrialisation", True, None),
    ("industrial-pending", "/industrial/reservations", False, "/onboarding"),
    ("industrial-pending", "/onboarding", True, None),
    ("industrial-pending", "/", True, "/onboarding"),
    ("distributor-approved", "/distributor", True, None),
    ("distributor-approved", "/printer/commandes/PM-0001", False, "/distributor"),
    ("distributor-pending", "/distributor/stores", False, "/onboarding"),
    ("admin", "/admin/organizations", True, None),
    ("admin", "/printer", False, "/admin"),
    ("admin", "/industrial", False, "/admin"),
    ("none", "/industrial", False, "/onboarding"),
    ("none", "/account", True, None),
]


@pytest.mark.parametrize(("kind", "path", "allowed", "redirect"), RESOLVE_TABLE)
def test_workspace_resolution(client, kind, path, allowed, redirect):
    answer = client.simulate_get("/api/workspace/resolve", params={"path": path}, headers=signed_in(caller(kind)))
    assert answer.status_code == 200
    assert answer.json["data"] == {"allowed": allowed, "redirectTo": redirect}


def test_resolve_needs_a_session_and_an_absolute_path(client):
    assert client.simulate_get("/api/workspace/resolve", params={"path": "/x"}).status_code == 401
    headers = signed_in(caller("printer"))
    assert client.simulate_get("/api/workspace/resolve", params={"path": "printer"}, headers=headers).status_code == 400
    assert client.simulate_get("/api/workspace/resolve", headers=headers).status_code == 400


def test_a_pending_onboarding_envelope_redirects_to_the_signature_page(client):
    user = caller("industrial-pending")
    previous = workspace._onboarding_pending
    workspace.set_onboarding_pending_check(lambda organization_id: organization_id.startswith("industrial:"))
    try:
        data = client.simulate_get("/api/auth/session", headers=signed_in(user)).json["data"]
        resolved = client.simulate_get("/api/workspace/resolve", params={"path": "/industrial"},
                                       headers=signed_in(user)).json["data"]
    finally:
        workspace.set_onboarding_pending_check(previous)
    assert data["workspace"] == {"home": "/industrial", "redirectTo": "/onboarding-signature-pending"}
    assert resolved == {"allowed": False, "redirectTo": "/onboarding-signature-pending"}
