"""An account is trusted only once its mailbox is proven, and a password change ends every link
sent before it."""

from __future__ import annotations

from backend.identity.models import AuthSession, AuthToken, TokenPurpose, User
from tests.factories import add_member, make_organization, make_user, random_siren, signed_in
from tests.identity.helpers import browser_of, cookie_header, cookie_of, last_email, token_in, verify_email

VICTIM = "victime@example.com"


ATTACKER_PASSWORD = "mot-de-passe-attaquant"


def _sign_up(client, email=VICTIM, password=ATTACKER_PASSWORD):
    answer = client.simulate_post("/api/auth/sign-up", json={"email": email, "password": password, "name": "X"})
    assert answer.status_code == 201
    return cookie_header(cookie_of(answer))


def test_an_unverified_account_cannot_create_an_organization(client):
    headers = _sign_up(client)
    body = {"actorType": "industrial", "siren": random_siren(), "legalName": "Squat SA"}
    refused = client.simulate_post("/api/organizations", headers=headers, json=body)
    assert refused.status_code == 403
    assert refused.json["error"]["details"]["reason"] == "email_not_verified"
    assert verify_email(client, VICTIM, headers).status_code == 200
    assert client.simulate_post("/api/organizations", headers=headers, json=body).status_code == 201


def test_an_unverified_account_cannot_accept_an_invitation(client):
    manager, organization = make_user(), make_organization()
    add_member(manager, organization)
    client.simulate_post(f"/api/organizations/{organization.id}/invitations", headers=signed_in(manager),
                         json={"email": VICTIM, "role": "member"})
    invitation = token_in(last_email(VICTIM, "invitation"))
    user = make_user(email=VICTIM, email_verified_at=None)
    refused = client.simulate_post(f"/api/invitations/{invitation}/accept", headers=signed_in(user))
    assert refused.status_code == 403
    assert refused.json["error"]["details"]["reason"] == "email_not_verified"


def test_the_victims_magic_link_drops_the_attackers_password_and_sessions(client):
    attacker = _sign_up(client)
    browser = browser_of(client.simulate_post("/api/auth/magic-link", json={"email": VICTIM}))
    magic = token_in(last_email(VICTIM, "magic_link"))
    victim = client.simulate_get("/api/auth/magic-link/verify", params={"token": magic}, headers=browser)
    assert victim.status_code == 200 and victim.json["data"]["user"]["emailVerified"] is True
    assert client.simulate_get("/api/auth/session", headers=attacker).status_code == 401
    again = client.simulate_post("/api/auth/sign-in", json={"email": VICTIM, "password": "mot-de-passe-attaquant"})
    assert again.status_code == 401
    assert User.get(User.email == VICTIM).password_hash is None


def test_the_victims_verification_link_drops_the_attackers_password(client):
    attacker = _sign_up(client)
    assert verify_email(client, VICTIM).status_code == 200  # opened in the victim's browser
    assert client.simulate_get("/api/auth/session", headers=attacker).status_code == 401
    assert client.simulate_post("/api/auth/sign-in", json={"email": VICTIM, "password": "mot-de-passe-attaquant"}
                                ).status_code == 401


def test_verifying_in_the_sign_up_session_keeps_the_password(client):
    own = _sign_up(client, password="mot-de-passe-a-moi")
    assert verify_email(client, VICTIM, own).status_code == 200
    assert client.simulate_get("/api/auth/session", headers=own).status_code == 200
    assert client.simulate_post("/api/auth/sign-in", json={"email": VICTIM, "password": "mot-de-passe-a-moi"}
                                ).status_code == 200


def test_the_victims_reset_revokes_every_session_of_the_attacker(client):
    attacker = _sign_up(client)
    client.simulate_post("/api/auth/password-reset", json={"email": VICTIM})
    reset = token_in(last_email(VICTIM, "password_reset"))
    answer = client.simulate_post("/api/auth/password-reset/confirm",
                                  json={"token": reset, "newPassword": "mot-de-passe-victime"})
    assert answer.status_code == 200
    assert client.simulate_get("/api/auth/session", headers=attacker).status_code == 401
    assert User.get(User.email == VICTIM).email_verified_at is not None


def _unused(user_id: str) -> set[str]:
    rows = AuthToken.select().where(AuthToken.user == user_id, AuthToken.used_at.is_null())
    return {row.purpose for row in rows}


def test_a_password_reset_burns_every_other_reset_and_magic_link(client):
    user = make_user(password="ancien-mot-de-passe")
    browser = browser_of(client.simulate_post("/api/auth/magic-link", json={"email": user.email}))
    magic = token_in(last_email(user.email, "magic_link"))
    client.simulate_post("/api/auth/password-reset", json={"email": user.email})
    first_reset = token_in(last_email(user.email, "password_reset"))
    client.simulate_post("/api/auth/password-reset", json={"email": user.email})
    second_reset = token_in(last_email(user.email, "password_reset"))
    assert client.simulate_post("/api/auth/password-reset/confirm",
                                json={"token": second_reset, "newPassword": "nouveau-mot-de-passe"}).status_code == 200
    assert _unused(user.id) == set()
    assert client.simulate_post("/api/auth/password-reset/confirm",
                                json={"token": first_reset, "newPassword": "autre-mot-de-passe"}).status_code == 400
    assert client.simulate_get("/api/auth/magic-link/verify", params={"token": magic},
                               headers=browser).status_code == 400


def test_a_password_change_burns_pending_links(client):
    user = make_user(password="ancien-mot-de-passe")
    client.simulate_post("/api/auth/magic-link", json={"email": user.email})
    client.simulate_post("/api/auth/password-reset", json={"email": user.email})
    assert _unused(user.id) == {TokenPurpose.MAGIC_LINK, TokenPurpose.PASSWORD_RESET}
    body = {"currentPassword": "ancien-mot-de-passe", "newPassword": "nouveau-mot-de-passe"}
    changed = client.simulate_post("/api/auth/change-password", headers=signed_in(user), json=body)
    assert changed.status_code == 200
    assert _unused(user.id) == set()


def test_a_magic_link_on_an_unverified_account_burns_the_other_links(client):
    _sign_up(client)
    user = User.get(User.email == VICTIM)
    client.simulate_post("/api/auth/password-reset", json={"email": VICTIM})
    browser = browser_of(client.simulate_post("/api/auth/magic-link", json={"email": VICTIM}))
    magic = token_in(last_email(VICTIM, "magic_link"))
    opened = client.simulate_get("/api/auth/magic-link/verify", params={"token": magic}, headers=browser)
    assert opened.status_code == 200
    assert TokenPurpose.PASSWORD_RESET not in _unused(user.id)
    assert AuthSession.select().where(AuthSession.user == user.id, AuthSession.revoked_at.is_null()).count() == 1


def test_a_magic_link_signs_in_only_the_browser_that_asked(client):
    """Login CSRF: the attacker's own link, opened by a victim (a link in a page or a mail), signs
    the victim's browser into nothing, and stays usable by the attacker's browser."""
    attacker = make_user()
    attackers_browser = browser_of(client.simulate_post("/api/auth/magic-link", json={"email": attacker.email}))
    link = token_in(last_email(attacker.email, "magic_link"))
    for victim in ({}, {"Cookie": "auth.magic_link_browser=" + "x" * 43}):
        opened = client.simulate_get("/api/auth/magic-link/verify", params={"token": link}, headers=victim)
        assert opened.status_code == 400 and "auth.session_token" not in opened.cookies
        assert opened.json["error"]["details"]["reason"] == "invalid_token"
    own = client.simulate_get("/api/auth/magic-link/verify", params={"token": link}, headers=attackers_browser)
    assert own.status_code == 200 and "auth.session_token" in own.cookies
    cookie = client.simulate_post("/api/auth/magic-link", json={"email": "personne@example.com"}).cookies[
        "auth.magic_link_browser"]
    assert cookie.http_only and cookie.path == "/api/auth/magic-link"  # set alike for an unknown address
