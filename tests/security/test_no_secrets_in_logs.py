"""No token or secret of a full account flow reaches a log line: the access log and the conflict
retry name route templates (`/api/invitations/{token}/accept`), never the path a client sent."""

from __future__ import annotations

import falcon
import falcon.testing
import pytest

from api import conflicts, errors
from backend.db import database
from tests.factories import add_member, make_organization, make_user, signed_in
from tests.identity.helpers import browser_of, cookie_header, cookie_of, last_email, token_in, verify_email
from tests.printing.test_concurrency_conflicts import Racing


def test_a_full_flow_writes_no_token_or_secret_to_the_logs(client, log_lines, config):
    password, new_password = "mot-de-passe-initial", "mot-de-passe-nouveau"
    email = "journal@example.com"
    signed_up = client.simulate_post("/api/auth/sign-up", json={"email": email, "password": password, "name": "J"})
    session = cookie_of(signed_up)
    verification = token_in(last_email(email, "email_verification"))
    verify_email(client, email, cookie_header(session))
    browser = browser_of(client.simulate_post("/api/auth/magic-link", json={"email": email}))
    magic = token_in(last_email(email, "magic_link"))
    opened = client.simulate_get("/api/auth/magic-link/verify", params={"token": magic}, headers=browser)
    client.simulate_get("/api/auth/magic-link/verify", params={"token": magic}, headers=browser)  # replayed: refused
    client.simulate_post("/api/auth/password-reset", json={"email": email})
    reset = token_in(last_email(email, "password_reset"))
    client.simulate_post("/api/auth/password-reset/confirm", json={"token": reset, "newPassword": new_password})
    client.simulate_post("/api/auth/password-reset/confirm", json={"token": reset, "newPassword": new_password})
    signed = client.simulate_post("/api/auth/sign-in", json={"email": email, "password": new_password})
    client.simulate_post("/api/auth/sign-in", json={"email": email, "password": password})  # wrong: refused

    manager, organization = make_user(), make_organization()
    add_member(manager, organization)
    client.simulate_post(f"/api/organizations/{organization.id}/invitations", headers=signed_in(manager),
                         json={"email": email, "role": "member"})
    invitation = token_in(last_email(email, "invitation"))
    accepted = client.simulate_post(f"/api/invitations/{invitation}/accept", headers=cookie_header(cookie_of(signed)))
    assert accepted.status_code == 200
    client.simulate_post(f"/api/invitations/{invitation}/accept", headers=cookie_header(cookie_of(signed)))
    client.simulate_post(f"//api/invitations/{invitation}/accept")  # a variant, unauthenticated

    secrets = [password, new_password, session, browser["Cookie"].partition("=")[2],
               cookie_of(opened), cookie_of(signed), verification, magic, reset,
               invitation, *config.secrets()]
    text = log_lines.raw()
    assert text, "the flow wrote no log line at all"
    leaked = [secret for secret in secrets if secret in text]
    assert leaked == []
    routes = {line.get("route") for line in log_lines() if line["scope"] == "api.request"}
    assert "/api/invitations/{token}/accept" in routes
    assert "/api/auth/magic-link/verify" in routes


class _RacingAtToken(Racing):
    def on_post(self, req, resp, token: str) -> None:
        super().on_post(req, resp)


@pytest.mark.committed
def test_a_lost_race_logs_the_route_not_the_token_in_its_path(log_lines):
    token = "invitation-token-0123456789abcdefghijklmnop"
    app = falcon.App()
    errors.register(app)
    conflicts.register(app)
    app.add_route("/race/{token}", conflicts.retrying(_RacingAtToken(losses=5)))
    with database.connection_context():
        answer = falcon.testing.TestClient(app).simulate_post(f"/race/{token}", json={"code": "UNIV_RACE_LOG"})
    assert answer.status_code == 409
    raced = [line for line in log_lines() if line["scope"] == "api.conflicts"]
    assert len(raced) == 2 and {line["route"] for line in raced} == {"/race/{token}"}
    assert token not in log_lines.raw()
