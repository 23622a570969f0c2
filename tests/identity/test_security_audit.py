"""Security audit log: one row per event family with actor, target, IP, user agent, request id
and time, never a secret; append-only; the admin list with filters and pagination."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from peewee import InternalError, ProgrammingError

from backend import clock
from backend.audit import SecurityEvent, record_security_event
from backend.db import transaction
from backend.identity.admin_users import ensure_admin
from tests.factories import add_member, make_organization, make_user, random_siren, signed_in
from tests.identity.helpers import browser_of, cookie_of, last_email, token_in
from tests.identity.test_organizations import billing_body

UA = {"User-Agent": "audit-test/1.0"}
PASSWORD, NEW_PASSWORD, THIRD_PASSWORD = "premier-secret-123", "second-secret-456", "troisieme-secret-789"


class Caller:
    """A client whose requests come from a new address each time (the flow exceeds the
    auth-sensitive limit of one address) and carry a known user agent."""

    def __init__(self, client) -> None:
        self.client, self.count = client, 0

    def __call__(self, method: str, path: str, headers: dict | None = None, **kwargs):
        self.count += 1
        return self.client.simulate_request(method, path, headers={**UA, **(headers or {})},
                                            remote_addr=f"10.66.0.{self.count}", **kwargs)


def test_every_event_family_is_recorded_once_with_its_context_and_no_secret(client):
    call = Caller(client)
    secrets = [PASSWORD, NEW_PASSWORD, THIRD_PASSWORD]
    account = {"email": "audit@example.com", "password": PASSWORD, "name": "Audit"}
    signed_up = call("POST", "/api/auth/sign-up", json=account)
    user_id = signed_up.json["data"]["user"]["id"]
    call("POST", "/api/auth/sign-up", json=account)
    verification = token_in(last_email("audit@example.com", "email_verification"))
    call("POST", "/api/auth/email-verification/confirm", json={"token": verification})
    call("POST", "/api/auth/email-verification/confirm", json={"token": "faux"})
    call("POST", "/api/auth/sign-in", json={"email": "audit@example.com", "password": "faux-faux"})
    browser = browser_of(call("POST", "/api/auth/magic-link", json={"email": "audit@example.com"}))
    magic = token_in(last_email("audit@example.com", "magic_link"))
    call("GET", "/api/auth/magic-link/verify", params={"token": magic}, headers=browser)
    call("GET", "/api/auth/magic-link/verify", params={"token": magic}, headers=browser)
    call("POST", "/api/auth/password-reset", json={"email": "audit@example.com"})
    reset = token_in(last_email("audit@example.com", "password_reset"))
    for _ in range(2):
        call("POST", "/api/auth/password-reset/confirm", json={"token": reset, "newPassword": NEW_PASSWORD})
    signed = call("POST", "/api/auth/sign-in", json={"email": "audit@example.com", "password": NEW_PASSWORD})
    cookies = [cookie_of(signed_up), cookie_of(signed)]
    headers = {"Cookie": f"auth.session_token={cookies[-1]}"}
    siren = random_siren()
    organization_path = f"/api/organizations/industrial:{siren}"
    call("POST", "/api/organizations", headers=headers,
         json={"actorType": "industrial", "siren": siren, "legalName": "Audit SA"})
    call("PUT", f"{organization_path}/billing-profile", headers=headers, json=billing_body(siren))
    call("POST", f"{organization_path}/kyb/submit", headers=headers)
    call("POST", f"{organization_path}/invitations", headers=headers,
         json={"email": "invite@example.com", "role": "member"})
    invitation = token_in(last_email("invite@example.com", "invitation"))
    call("POST", f"/api/invitations/{invitation}/accept", headers=signed_in(make_user(email="invite@example.com")))
    for current in ("pas-le-bon-mot", NEW_PASSWORD):
        call("POST", "/api/auth/change-password", headers=headers,
             json={"currentPassword": current, "newPassword": THIRD_PASSWORD})
    call("POST", "/api/auth/sign-out", headers=headers)
    admin, _ = ensure_admin(email="root@example.com", password="mot-de-passe-admin")
    admin_headers = signed_in(admin)
    call("POST", "/api/admin/users", headers=admin_headers,
         json={"email": "p@example.com", "name": "P", "role": "printer", "password": "secret-print-1"})
    call("PATCH", f"/api/admin/users/{user_id}", headers=admin_headers, json={"name": "Renommé"})
    call("POST", "/api/auth/assign-role", headers=admin_headers, json={"userId": user_id, "role": "printer"})
    call("PATCH", f"/api/admin/users/{user_id}", headers=admin_headers, json={"blocked": True})
    call("PATCH", f"/api/admin/users/{user_id}", headers=admin_headers, json={"blocked": False})
    secrets += [*cookies, verification, magic, reset, invitation, "secret-print-1", "mot-de-passe-admin"]

    rows = list(SecurityEvent.select().order_by(SecurityEvent.id))
    # Each action of the flow leaves exactly one row; the few that happen twice say why.
    assert Counter(row.event for row in rows) == {
        "auth.sign_up.success": 1, "auth.sign_up.failure": 1, "auth.sign_in.success": 1, "auth.sign_in.failure": 1,
        "auth.magic_link.requested": 1, "auth.magic_link.success": 1, "auth.magic_link.failure": 1,
        "auth.sign_out.success": 1, "auth.password_reset.requested": 1, "auth.password_reset.success": 1,
        "auth.password_reset.failure": 1, "auth.password_change.success": 1, "auth.password_change.failure": 1,
        "auth.email_verification.requested": 1, "auth.email_verification.success": 1,
        "auth.email_verification.first_proof": 1,
        "auth.email_verification.failure": 1, "admin.admin.created": 1, "admin.user.created": 1,
        "admin.user.updated": 3,  # renamed, blocked, unblocked
        "admin.user.blocked": 1, "admin.user.unblocked": 1, "admin.role.changed": 1,
        "organization.created": 1, "organization.membership.created": 2,  # the creator, then the invited
        "organization.billing_profile.updated": 1, "kyb.submitted": 1,
        "organization.invitation.created": 1, "organization.invitation.accepted": 1,
    }
    for row in rows:
        if row.event == "admin.admin.created":  # from the command line: no request
            assert row.ip is None and row.request_id is None
            continue
        assert row.user_agent == "audit-test/1.0" and row.ip.startswith("10.66.0."), row.event
        assert row.request_id and row.occurred_at, row.event
    sign_out = next(row for row in rows if row.event == "auth.sign_out.success")
    assert (sign_out.actor_user_id, sign_out.target_id) == (user_id, user_id)
    dumped = json.dumps([row.__data__ for row in rows], default=str)
    for secret in secrets:
        assert secret not in dumped


def test_details_named_like_secrets_are_redacted():
    record_security_event("test.event", actor_user_id=None, details={"password": "hunter22", "token": "abc"})
    row = SecurityEvent.get(SecurityEvent.event == "test.event")
    assert row.details == {"password": "[REDACTED]", "token": "[REDACTED]"}


def test_the_audit_table_is_append_only():
    """The runtime role may not (ProgrammingError: no privilege); the owner's trigger refuses too."""
    record_security_event("test.event", actor_user_id=None)
    with pytest.raises((InternalError, ProgrammingError)), transaction():
        SecurityEvent.update(event="changed").execute()
    with pytest.raises((InternalError, ProgrammingError)), transaction():
        SecurityEvent.delete().execute()


def test_a_failed_action_keeps_its_audit_row(client):
    client.simulate_post("/api/auth/sign-in", json={"email": "ghost@example.com", "password": "whatever"})
    row = SecurityEvent.get(SecurityEvent.event == "auth.sign_in.failure")
    assert row.details == {"email": "ghost@example.com", "reason": "unknown_email"}


def _events_at(*moments_and_names):
    for moment, name, actor, target in moments_and_names:
        with clock.frozen_at(moment):
            record_security_event(name, actor_user_id=actor, target_type="user", target_id=target)


def test_admin_audit_list_filters_by_family_actor_target_and_dates_and_paginates(client):
    admin = make_user(roles=["admin"])
    headers = signed_in(admin)
    day = datetime(2026, 3, 10, tzinfo=UTC)
    _events_at(
        (day, "auth.sign_in.success", "u1", "u1"),
        (day + timedelta(hours=1), "auth.sign_in.failure", None, None),
        (day + timedelta(days=1), "auth.sign_out.success", "u1", "u1"),
        (day + timedelta(days=2), "admin.user.blocked", "a1", "u1"),
        (day + timedelta(days=3), "auth.sign_in_extra.success", "u2", "u2"),
    )

    def get(**params):
        answer = client.simulate_get("/api/admin/audit/security", params=params, headers=headers)
        assert answer.status_code == 200, answer.json
        return answer.json["data"]

    window = {"from": "2026-03-10T00:00:00Z", "to": "2026-03-14T00:00:00Z"}
    page = get(**window)
    assert page["total"] == 5 and page["page"] == 1 and page["pageSize"] == 25
    assert [item["event"] for item in page["items"]][:2] == ["auth.sign_in_extra.success", "admin.user.blocked"]
    assert [i["event"] for i in get(event="auth.sign_in", **window)["items"]] == [
        "auth.sign_in.failure", "auth.sign_in.success"]
    assert get(actorUserId="u1", **window)["total"] == 2
    assert get(targetId="u1", **window)["total"] == 3
    assert get(**{"from": "2026-03-11T00:00:00Z", "to": "2026-03-12T00:00:00Z"})["total"] == 1
    second = get(pageSize=2, page=2, sortBy="occurredAt", sortDir="asc", **window)
    assert [i["event"] for i in second["items"]] == ["auth.sign_out.success", "admin.user.blocked"]
    assert second["total"] == 5
    item = second["items"][0]
    assert set(item) == {"id", "occurredAt", "event", "actorUserId", "targetType", "targetId", "ip", "userAgent",
                         "requestId", "details"}
    assert item["occurredAt"] == "2026-03-11T00:00:00.000Z"
    bad = client.simulate_get("/api/admin/audit/security", params={"sortBy": "ip"}, headers=headers)
    assert bad.status_code == 400 and "sortBy" in bad.json["error"]["details"]["fields"]


def test_ordinary_users_cannot_read_the_audit_log(client):
    user = make_user()
    add_member(user, make_organization(kyb_status="approved"))
    assert client.simulate_get("/api/admin/audit/security", headers=signed_in(user)).status_code == 403
