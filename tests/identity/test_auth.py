"""Authentication routes: sign-up, sign-in, sign-out, session, magic link, password reset and
change, e-mail verification, cookie and cross-origin rules, auth-sensitive rate limit."""

from __future__ import annotations

from datetime import timedelta

import pytest

from backend import clock
from backend.identity.models import AuthSession, User
from tests.factories import DEFAULT_PASSWORD, make_user, signed_in
from tests.identity.helpers import (
    TOKEN_IN_LINK,
    browser_of,
    cookie_header,
    cookie_of,
    delivered_text,
    last_email,
    token_in,
)

SIGN_UP = "/api/auth/sign-up"
SIGN_IN = "/api/auth/sign-in"
SESSION = "/api/auth/session"


def sign_up(client, email="nouvelle@example.com", password="un-mot-de-passe", name="Nouvelle"):  # noqa: S107
    return client.simulate_post(SIGN_UP, json={"email": email, "password": password, "name": name})


def test_sign_up_creates_a_user_without_role_sets_the_cookie_and_queues_a_verification(client):
    answer = sign_up(client, email="Nouvelle@Example.com")
    assert answer.status_code == 201
    user = answer.json["data"]["user"]
    assert user["email"] == "nouvelle@example.com" and user["roles"] == [] and user["emailVerified"] is False
    assert user["createdAt"].endswith("Z")
    cookie = answer.cookies["auth.session_token"]
    assert cookie.http_only and cookie.path == "/" and len(cookie.value) >= 43
    assert "samesite=lax" in answer.headers["set-cookie"].lower()
    stored = User.get_by_id(user["id"])
    assert stored.password_hash.startswith("$argon2id$")
    assert AuthSession.get(AuthSession.user == stored.id).token_hash != cookie.value
    message = last_email("nouvelle@example.com", "email_verification")
    assert "Vitrine" in message.subject and "Bienvenue" in message.body_text


@pytest.mark.parametrize(
    ("path", "caller", "body", "field"),
    [
        ("/api/auth/sign-in", None, {"email": "a@example.com"}, "password"),
        ("/api/auth/magic-link", None, {"email": "pas-un-email"}, "email"),
        ("/api/auth/password-reset", None, {}, "email"),
        ("/api/auth/password-reset/confirm", None, {"token": "t", "newPassword": "court"}, "newPassword"),
        ("/api/auth/email-verification/confirm", None, {"token": ""}, "token"),
        ("/api/auth/active-organization", "user", {}, "organizationId"),
        ("/api/auth/change-password", "user", {"currentPassword": "x"}, "newPassword"),
        ("/api/auth/assign-role", "admin", {"userId": "u", "role": "superuser"}, "role"),
        ("/api/auth/assign-role", "admin", {"userId": "u", "role": "printer", "permissions": ["all"]},
         "permissions"),
    ],
)
def test_every_auth_route_refuses_a_bad_body_with_field_errors(client, path, caller, body, field):
    headers = {"user": lambda: signed_in(make_user()), "admin": lambda: signed_in(make_user(roles=["admin"]))}
    answer = client.simulate_post(path, json=body, headers=headers[caller]() if caller else {})
    assert answer.status_code == 400, answer.json
    assert answer.json["error"]["code"] == "VALIDATION_ERROR"
    assert field in answer.json["error"]["details"]["fields"]
    not_json = client.simulate_post(path, body=b"[1, 2]", headers={"content-type": "application/json",
                                                                    **(headers[caller]() if caller else {})})
    assert not_json.status_code == 400 and not_json.json["error"]["code"] == "VALIDATION_ERROR"


def test_magic_link_verify_needs_a_token(client):
    answer = client.simulate_get("/api/auth/magic-link/verify")
    assert answer.status_code == 400 and "token" in answer.json["error"]["details"]["fields"]


def test_session_cookie_is_secure_unless_cookie_secure_is_false(make_app):
    import falcon.testing

    answer = sign_up(falcon.testing.TestClient(make_app(cookie_secure=True)))
    assert answer.cookies["auth.session_token"].secure


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"email": "pas-un-email", "password": "un-mot-de-passe", "name": "X"}, "email"),
        ({"email": "a@example.com", "password": "court", "name": "X"}, "password"),
        ({"email": "a@example.com", "password": "x" * 129, "name": "X"}, "password"),
        ({"email": "a@example.com", "password": "un-mot-de-passe"}, "name"),
    ],
)
def test_sign_up_refuses_a_bad_body_with_field_errors(client, body, field):
    answer = client.simulate_post(SIGN_UP, json=body)
    assert answer.status_code == 400
    assert answer.json["error"]["code"] == "VALIDATION_ERROR"
    assert field in answer.json["error"]["details"]["fields"]


def test_sign_up_accepts_reserved_documentation_domains_and_refuses_a_taken_address(client):
    assert sign_up(client, email="doc@example.com").status_code == 201
    again = sign_up(client, email="DOC@example.com")
    assert again.status_code == 409 and again.json["error"]["code"] == "CONFLICT"


def test_sign_in_answers_the_user_and_a_new_session(client):
    user = make_user()
    answer = client.simulate_post(SIGN_IN, json={"email": user.email.upper(), "password": DEFAULT_PASSWORD})
    assert answer.status_code == 200
    assert answer.json["data"]["user"]["id"] == user.id
    session = client.simulate_get(SESSION, headers=cookie_header(cookie_of(answer)))
    assert session.json["data"]["user"]["email"] == user.email


def test_unknown_email_wrong_password_and_blocked_account_answer_alike(client):
    user = make_user()
    blocked = make_user(blocked_at=clock.now())
    answers = [
        client.simulate_post(SIGN_IN, json={"email": "personne@example.com", "password": DEFAULT_PASSWORD}),
        client.simulate_post(SIGN_IN, json={"email": user.email, "password": "mauvais-mot"}),
        client.simulate_post(SIGN_IN, json={"email": blocked.email, "password": DEFAULT_PASSWORD}),
    ]
    assert {a.status_code for a in answers} == {401}
    assert {(a.json["error"]["code"], a.json["error"]["message"]) for a in answers} == {
        ("AUTH_INVALID_CREDENTIALS", "wrong e-mail or password")
    }
    assert all("set-cookie" not in a.headers for a in answers)


def test_sign_in_refuses_a_bad_body(client):
    answer = client.simulate_post(SIGN_IN, json={"email": "a@example.com"})
    assert answer.status_code == 400 and "password" in answer.json["error"]["details"]["fields"]


def test_sign_in_is_limited_to_ten_per_minute_per_ip(client):
    user = make_user()
    body = {"email": user.email, "password": "mauvais-mot"}
    answers = [client.simulate_post(SIGN_IN, json=body, remote_addr="10.9.8.7") for _ in range(11)]
    assert [a.status_code for a in answers] == [401] * 10 + [429]
    assert answers[-1].json["error"]["code"] == "RATE_LIMITED"
    other_ip = client.simulate_post(SIGN_IN, json=body, remote_addr="10.9.8.6")
    assert other_ip.status_code == 401


def test_session_route_needs_a_live_session(client):
    assert client.simulate_get(SESSION).json["error"]["code"] == "UNAUTHENTICATED"
    unknown = client.simulate_get(SESSION, headers=cookie_header("not-a-token"))
    assert unknown.status_code == 401


def test_a_session_expires_after_its_lifetime(client):
    headers = signed_in(make_user())
    assert client.simulate_get(SESSION, headers=headers).status_code == 200
    with clock.frozen_at(clock.now() + timedelta(days=7, seconds=1)):
        assert client.simulate_get(SESSION, headers=headers).status_code == 401


def test_sign_out_revokes_the_session_and_clears_the_cookie(client):
    user = make_user()
    headers, other = signed_in(user), signed_in(user)
    answer = client.simulate_post("/api/auth/sign-out", headers=headers)
    assert answer.status_code == 200 and answer.json["data"] == {"done": True}
    assert answer.cookies["auth.session_token"].value == ""
    assert client.simulate_get(SESSION, headers=headers).status_code == 401
    assert client.simulate_post("/api/auth/sign-out", headers=headers).status_code == 401
    assert client.simulate_get(SESSION, headers=other).status_code == 200


def test_cookie_writes_from_a_foreign_origin_are_refused(client):
    headers = signed_in(make_user())
    foreign = client.simulate_post("/api/auth/sign-out", headers={**headers, "Origin": "https://evil.example"})
    assert foreign.status_code == 403 and foreign.json["error"]["code"] == "FORBIDDEN"
    assert client.simulate_get(SESSION, headers={**headers, "Origin": "https://evil.example"}).status_code == 200
    same = client.simulate_post("/api/auth/sign-out", headers={**headers, "Origin": "http://testserver"})
    assert same.status_code == 200
    headers = signed_in(make_user())
    assert client.simulate_post("/api/auth/sign-out", headers=headers).status_code == 200  # no Origin


def test_magic_link_answers_alike_and_mails_only_existing_active_accounts(client):
    user = make_user()
    blocked = make_user(blocked_at=clock.now())
    for email in (user.email, "personne@example.com", blocked.email):
        answer = client.simulate_post("/api/auth/magic-link", json={"email": email})
        assert (answer.status_code, answer.json) == (200, {"ok": True, "data": {"done": True}})
    assert last_email(user.email, "magic_link") is not None
    assert last_email("personne@example.com") is None and last_email(blocked.email) is None


def test_magic_link_signs_in_once_and_verifies_the_address(client):
    user = make_user(email_verified_at=None)
    browser = browser_of(client.simulate_post("/api/auth/magic-link", json={"email": user.email}))
    text = delivered_text(last_email(user.email, "magic_link"))
    assert "15 minutes" in text and "http://testserver/api/auth/magic-link/verify?token=" in text
    token = TOKEN_IN_LINK.search(text).group(1)
    answer = client.simulate_get("/api/auth/magic-link/verify", params={"token": token}, headers=browser)
    assert answer.status_code == 200 and answer.json["data"]["user"]["emailVerified"] is True
    assert client.simulate_get(SESSION, headers=cookie_header(cookie_of(answer))).status_code == 200
    reused = client.simulate_get("/api/auth/magic-link/verify", params={"token": token}, headers=browser)
    assert reused.status_code == 400 and reused.json["error"]["details"]["reason"] == "invalid_token"


def test_magic_link_expires_after_15_minutes(client):
    user = make_user()
    browser = browser_of(client.simulate_post("/api/auth/magic-link", json={"email": user.email}))
    token = token_in(last_email(user.email, "magic_link"))
    with clock.frozen_at(clock.now() + timedelta(minutes=15, seconds=1)):
        answer = client.simulate_get("/api/auth/magic-link/verify", params={"token": token}, headers=browser)
    assert answer.status_code == 400 and "set-cookie" not in answer.headers


def test_password_reset_sets_the_password_once_and_revokes_other_sessions(client):
    user = make_user()
    old_session = signed_in(user)
    blocked = make_user(blocked_at=clock.now())
    for email in (user.email, "personne@example.com", blocked.email):  # one answer: no enumeration
        answer = client.simulate_post("/api/auth/password-reset", json={"email": email})
        assert (answer.status_code, answer.json) == (200, {"ok": True, "data": {"done": True}})
    assert last_email("personne@example.com") is None and last_email(blocked.email) is None
    token = token_in(last_email(user.email, "password_reset"))
    body = {"token": token, "newPassword": "nouveau-mot-de-passe"}
    assert client.simulate_post("/api/auth/password-reset/confirm", json=body).status_code == 200
    assert client.simulate_get(SESSION, headers=old_session).status_code == 401
    old = client.simulate_post(SIGN_IN, json={"email": user.email, "password": DEFAULT_PASSWORD})
    new = client.simulate_post(SIGN_IN, json={"email": user.email, "password": "nouveau-mot-de-passe"})
    assert (old.status_code, new.status_code) == (401, 200)
    reused = client.simulate_post("/api/auth/password-reset/confirm", json=body)
    assert reused.status_code == 400 and reused.json["error"]["details"]["reason"] == "invalid_token"


def test_password_reset_keeps_the_callers_own_session(client):
    user = make_user()
    mine, other = signed_in(user), signed_in(user)
    client.simulate_post("/api/auth/password-reset", json={"email": user.email})
    token = token_in(last_email(user.email, "password_reset"))
    client.simulate_post("/api/auth/password-reset/confirm", headers=mine,
                         json={"token": token, "newPassword": "nouveau-mot-de-passe"})
    assert client.simulate_get(SESSION, headers=mine).status_code == 200
    assert client.simulate_get(SESSION, headers=other).status_code == 401


def test_password_reset_token_expires_after_an_hour_and_needs_a_valid_password(client):
    user = make_user()
    client.simulate_post("/api/auth/password-reset", json={"email": user.email})
    token = token_in(last_email(user.email, "password_reset"))
    short = client.simulate_post("/api/auth/password-reset/confirm", json={"token": token, "newPassword": "court"})
    assert short.status_code == 400 and "newPassword" in short.json["error"]["details"]["fields"]
    with clock.frozen_at(clock.now() + timedelta(hours=1, seconds=1)):
        late = client.simulate_post("/api/auth/password-reset/confirm",
                                    json={"token": token, "newPassword": "nouveau-mot-de-passe"})
    assert late.status_code == 400


def test_change_password_needs_the_current_one_and_revokes_other_sessions(client):
    user = make_user()
    mine, other = signed_in(user), signed_in(user)
    wrong = client.simulate_post("/api/auth/change-password", headers=mine,
                                 json={"currentPassword": "mauvais-mot", "newPassword": "nouveau-mot-de-passe"})
    assert wrong.status_code == 401 and wrong.json["error"]["code"] == "AUTH_INVALID_CREDENTIALS"
    done = client.simulate_post("/api/auth/change-password", headers=mine,
                                json={"currentPassword": DEFAULT_PASSWORD, "newPassword": "nouveau-mot-de-passe"})
    assert done.status_code == 200
    assert client.simulate_get(SESSION, headers=mine).status_code == 200
    assert client.simulate_get(SESSION, headers=other).status_code == 401


def test_email_verification_confirms_once(client):
    answer = sign_up(client, email="verif@example.com")
    token = token_in(last_email("verif@example.com", "email_verification"))
    confirmed = client.simulate_post("/api/auth/email-verification/confirm", json={"token": token})
    assert confirmed.status_code == 200 and confirmed.json["data"]["user"]["emailVerified"] is True
    assert answer.json["data"]["user"]["emailVerified"] is False
    again = client.simulate_post("/api/auth/email-verification/confirm", json={"token": token})
    assert again.status_code == 400 and again.json["error"]["details"]["reason"] == "invalid_token"
    assert client.simulate_post("/api/auth/email-verification/confirm", json={}).status_code == 400


def test_a_token_of_one_purpose_is_refused_for_another(client):
    sign_up(client, email="mix@example.com")
    token = token_in(last_email("mix@example.com", "email_verification"))
    answer = client.simulate_post("/api/auth/password-reset/confirm",
                                  json={"token": token, "newPassword": "nouveau-mot-de-passe"})
    assert answer.status_code == 400


def test_a_blocked_user_loses_its_sessions_and_its_pending_links(client):
    admin = make_user(roles=["admin"])
    user = make_user()
    headers = signed_in(user)
    browser = browser_of(client.simulate_post("/api/auth/magic-link", json={"email": user.email}))
    token = token_in(last_email(user.email, "magic_link"))
    blocked = client.simulate_patch(f"/api/admin/users/{user.id}", json={"blocked": True}, headers=signed_in(admin))
    assert blocked.status_code == 200 and blocked.json["data"]["user"]["blocked"] is True
    assert client.simulate_get(SESSION, headers=headers).status_code == 401
    assert client.simulate_get("/api/auth/magic-link/verify", params={"token": token},
                               headers=browser).status_code == 400


def test_active_organization_must_be_a_membership(client):
    from tests.factories import add_member, make_organization

    user = make_user()
    first, second, foreign = make_organization(), make_organization("distributor"), make_organization()
    add_member(user, first)
    add_member(user, second, "member")
    headers = signed_in(user)
    assert client.simulate_get(SESSION, headers=headers).json["data"]["activeOrganizationId"] == first.id
    switched = client.simulate_post("/api/auth/active-organization", json={"organizationId": second.id},
                                    headers=headers)
    assert switched.status_code == 200
    data = switched.json["data"]
    assert data["activeOrganizationId"] == second.id and data["workspace"]["home"] == "/distributor"
    assert sorted(data["roles"]) == ["distributor", "industrial"]
    refused = client.simulate_post("/api/auth/active-organization", json={"organizationId": foreign.id},
                                   headers=headers)
    assert refused.status_code == 403 and refused.json["error"]["code"] == "FORBIDDEN"


def test_the_session_route_costs_two_sql_statements(client):
    """The policy's session lookup (session, user, membership, the user's organizations, in one
    statement) and the onboarding check of the active one: nothing is read twice."""
    from tests.factories import add_member, make_organization
    from tests.support import sql_statements

    user = make_user()
    add_member(user, make_organization(kyb_status="approved"))
    headers = signed_in(user)
    with sql_statements() as statements:
        answer = client.simulate_get(SESSION, headers=headers)
    assert answer.status_code == 200 and answer.json["data"]["workspace"] == {"home": "/industrial", "redirectTo": None}
    assert len(statements) == 2, [statement[:80] for statement in statements]


def test_a_resolved_session_carries_its_user_and_role_in_the_active_organization():
    from backend.identity.sessions import resolve_session
    from tests.factories import add_member, make_organization, session_cookie

    user = make_user()
    organization = make_organization()
    add_member(user, organization, "billing")
    resolved = resolve_session(session_cookie(user))
    assert (resolved.user.id, resolved.user.email) == (user.id, user.email)
    assert (resolved.principal.active_organization_id, resolved.principal.membership_role) == (
        organization.id, "billing")
    assert resolve_session(session_cookie(make_user())).principal.membership_role is None


def test_a_resolved_session_carries_its_organizations_and_whether_the_active_one_is_open():
    """Read with the session, in its one statement: the user's organizations (oldest membership
    first, with its role in each) and the KYB gate of the active one, as `business_open` says."""
    from backend.identity.organizations import business_open, organizations_of
    from backend.identity.sessions import resolve_session
    from tests.factories import add_member, make_organization, session_cookie

    user = make_user()
    rejected = make_organization(kyb_status="rejected")
    printer = make_organization("printer")
    approved = make_organization("distributor", kyb_status="approved")
    add_member(user, rejected, "manager")
    add_member(user, printer, "billing")
    add_member(user, approved, "member")
    for organization, is_open in ((rejected, False), (printer, True), (approved, True)):
        resolved = resolve_session(session_cookie(user, organization), organizations=True)
        assert resolved.principal.organization_open is is_open is business_open(organization.id)
        assert [(o.id, o.actor_type, o.legal_name, o.kyb_status, role) for o, role in resolved.organizations] == [
            (o.id, o.actor_type, o.legal_name, o.kyb_status, role) for o, role in organizations_of(user.id)]
    assert resolve_session(session_cookie(user)).organizations is None  # only when asked for
    lonely = resolve_session(session_cookie(make_user()), organizations=True)
    assert lonely.organizations == [] and lonely.principal.organization_open is False
