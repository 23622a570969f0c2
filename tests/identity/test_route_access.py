"""The route table: every route declares an access rule for every method it answers, every
`/api/admin/**` route requires `admin`, and the policy enforces rules (401, 403, KYB gate)."""

from __future__ import annotations

import re

import falcon.testing
import pytest

from api.access import PUBLIC, SESSION, Access, Route, admin, roles
from api.policy import enforce
from backend.errors import Forbidden, Unauthenticated
from backend.identity.principal import Principal
from tests.factories import add_member, make_organization, make_user, signed_in

METHODS = ("get", "post", "put", "patch", "delete")


def responders(route: Route) -> list[str]:
    suffix = f"_{route.suffix}" if route.suffix else ""
    return [m.upper() for m in METHODS if getattr(route.resource, f"on_{m}{suffix}", None) is not None]


def undeclared(routes: list[Route]) -> list[str]:
    """`METHOD path` of every responder without an access rule."""
    missing = []
    for route in routes:
        for method in responders(route):
            try:
                rule = route.access_for(method)
            except KeyError:
                rule = None
            if not isinstance(rule, Access):
                missing.append(f"{method} {route.path}")
    return missing


def test_every_registered_route_declares_an_access_rule_for_each_method(app):
    assert app.deps.routes
    assert undeclared(app.deps.routes) == []


def _router_templates(nodes):
    for node in nodes:
        if node.resource is not None:
            yield node.uri_template
        yield from _router_templates(node.children)


def test_the_app_serves_no_route_outside_the_table(app):
    assert set(_router_templates(app._router._roots)) == {route.path for route in app.deps.routes}


def test_the_check_catches_a_route_added_without_a_rule():
    class NewThing:
        def on_get(self, req, resp): ...
        def on_delete(self, req, resp): ...

    route = Route("/api/new-thing", NewThing(), {"GET": SESSION})
    assert undeclared([route]) == ["DELETE /api/new-thing"]


def test_every_admin_route_requires_the_admin_role(app):
    """... or, for billing's, the permission `billing.manage.all` alone (API.md "Money that always balances")."""
    from api.access import BILLING_MANAGER

    admin_routes = [r for r in app.deps.routes if r.path.startswith("/api/admin/")]
    assert admin_routes
    for route in admin_routes:
        for method in responders(route):
            rule = route.access_for(method)
            assert (rule.kind, rule.roles) == ("roles", ("admin",)) or rule == BILLING_MANAGER, f"{method} {route.path}"


def _admin_calls(app) -> list[tuple[str, str]]:
    calls = []
    for route in app.deps.routes:
        if route.path.startswith("/api/admin/"):
            path = re.sub(r"\{[^}]*\}", "1", route.path)
            calls += [(method, path) for method in responders(route)]
    return calls


def test_admin_routes_answer_401_without_a_session_and_403_for_another_role(app):
    client = falcon.testing.TestClient(app)
    industrial = make_user()
    add_member(industrial, make_organization(kyb_status="approved"))
    headers = signed_in(industrial)
    for n, (method, path) in enumerate(_admin_calls(app)):
        ip = f"10.77.{n // 200}.{n % 200 + 1}"  # within the admin-critical limit whatever the route count
        anonymous = client.simulate_request(method, path, json={}, remote_addr=ip)
        assert anonymous.status_code == 401, f"{method} {path}"
        assert anonymous.json["error"]["code"] == "UNAUTHENTICATED"
        refused = client.simulate_request(method, path, json={}, headers=headers, remote_addr=ip)
        assert refused.status_code == 403, f"{method} {path}"
        assert refused.json["error"]["code"] == "FORBIDDEN"


def test_a_permission_is_required_beyond_the_role(client):
    admin_without = make_user(roles=["admin"])
    answer = client.simulate_post("/api/notifications/email-smoke", json={}, headers=signed_in(admin_without))
    assert answer.status_code == 200  # admins hold every permission
    principal = Principal("u", "u@example.com", frozenset({"industrial"}), frozenset(), "industrial:1", "manager")
    with pytest.raises(Forbidden):
        enforce(roles("industrial", permission="billing.manage.all"), principal)


def test_membership_roles_rule():
    rule = roles("industrial", membership_roles=("manager", "billing"))
    member = Principal("u", "u@example.com", frozenset({"industrial"}), frozenset(), "industrial:1", "member")
    with pytest.raises(Forbidden):
        enforce(rule, member)
    enforce(rule, Principal("u", "u@example.com", frozenset({"industrial"}), frozenset(), "industrial:1", "billing"))
    with pytest.raises(Unauthenticated):
        enforce(rule, None)
    enforce(PUBLIC, None)


class Business:
    def on_get(self, req, resp):
        resp.media = {"ok": True, "data": {"principal": req.context.principal.user_id}}


@pytest.fixture
def business_client(app):
    """The app with one business route of industrial and distributor workspaces (KYB gated)."""
    route = Route("/api/test/business", Business(), roles("industrial", "distributor", "admin", kyb_required=True))
    app.deps.routes.append(route)
    app.add_route(route.path, route.resource)
    return falcon.testing.TestClient(app)


@pytest.mark.parametrize("actor_type", ["industrial", "distributor"])
@pytest.mark.parametrize("kyb_status", [None, "submitted", "in_review", "rejected"])
def test_business_routes_are_blocked_until_kyb_is_approved(business_client, actor_type, kyb_status):
    user = make_user()
    add_member(user, make_organization(actor_type, kyb_status=kyb_status))
    answer = business_client.simulate_get("/api/test/business", headers=signed_in(user))
    assert answer.status_code == 403
    assert answer.json["error"]["code"] == "FORBIDDEN"
    assert answer.json["error"]["details"]["reason"] == "kyb_not_approved"


def test_business_routes_open_once_kyb_is_approved_and_for_admins(business_client):
    user = make_user()
    add_member(user, make_organization("distributor", kyb_status="approved"))
    assert business_client.simulate_get("/api/test/business", headers=signed_in(user)).status_code == 200
    admin_user = make_user(roles=["admin"])
    assert business_client.simulate_get("/api/test/business", headers=signed_in(admin_user)).status_code == 200


def test_session_organization_and_kyb_routes_stay_open_while_kyb_is_pending(client):
    user = make_user()
    organization = make_organization(kyb_status=None)
    add_member(user, organization)
    headers = signed_in(user)
    assert client.simulate_get("/api/auth/session", headers=headers).status_code == 200
    assert client.simulate_get(f"/api/organizations/{organization.id}", headers=headers).status_code == 200
    submitted = client.simulate_post(f"/api/organizations/{organization.id}/kyb/submit", headers=headers)
    assert submitted.status_code == 409  # open, but the billing profile is missing
    assert submitted.json["error"]["details"]["reason"] == "billing_profile_missing"


def test_openapi_documents_every_identity_route_with_its_access(client):
    document = client.simulate_get("/api/openapi.json").json
    paths = document["paths"]
    assert paths["/api/auth/sign-in"]["post"]["x-access"] == "public"
    assert paths["/api/admin/organizations"]["get"]["x-access"] == "admin"
    assert paths["/api/notifications/email-smoke"]["post"]["x-access"] == "admin + platform.manage"
    schemas = document["components"]["schemas"]
    for name in ("SignUpIn", "UserEnvelope", "SessionEnvelope", "BillingProfileIn", "AdminOrganizationsEnvelope",
                 "SecurityAuditEnvelope"):
        assert name in schemas
    assert admin().describe() == "admin"
