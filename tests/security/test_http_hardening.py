"""Rate limits that a path variant cannot sidestep, Origin and Content-Type rules against login
CSRF, the client IP behind proxies, and rate limits shared in Redis by default."""

from __future__ import annotations

import uuid

import falcon.testing
import pytest

from api.clientip import client_ip
from backend.config import load_config
from tests.factories import make_user


def _ip() -> str:
    n = uuid.uuid4().int
    return f"10.{n % 250}.{(n >> 8) % 250}.{(n >> 16) % 250 + 1}"


VARIANTS = {
    "/api/auth/sign-in": ["//api/auth/sign-in", "/./api/auth/sign-in", "/api//auth/sign-in", "/api/./auth/sign-in",
                          "/api/auth/x/../sign-in"],
    "/api/auth/password-reset": ["//api/auth/password-reset", "/api/auth/./password-reset",
                                 "/api/auth//password-reset/"],
    "/api/admin/users": ["//api/admin/users", "/./api/admin/users", "/api/admin//users"],
}


@pytest.mark.parametrize("canonical", sorted(VARIANTS))
def test_path_variants_share_the_bucket_of_their_route(client, canonical):
    ip, variants = _ip(), VARIANTS[canonical]
    limit = 60 if canonical.startswith("/api/admin") else 10
    method = "GET" if canonical.startswith("/api/admin") else "POST"
    for i in range(limit):
        path = variants[i % len(variants)] if i % 2 else canonical
        answer = client.simulate_request(method, path, remote_addr=ip, json={})
        assert answer.status_code not in (404, 429), path
        assert answer.headers["x-ratelimit-limit"] == str(limit), path
        assert answer.headers["x-ratelimit-remaining"] == str(limit - 1 - i), path
    for variant in variants:
        refused = client.simulate_request(method, variant, remote_addr=ip, json={})
        assert refused.status_code == 429, variant
        assert refused.json["error"]["code"] == "RATE_LIMITED"


def test_a_variant_reaches_the_handler_of_its_canonical_route(client):
    # `//api/...` and `/./api/...` are one route, with its access rule: never a way around it.
    assert client.simulate_get("//api/admin/users").status_code == 401
    assert client.simulate_get("/./api/admin/users").status_code == 401
    assert client.simulate_get("/api/admin/../admin/users").status_code == 401


def test_foreign_origin_is_refused_without_a_session_cookie(client):
    user = make_user(password="mot-de-passe-long")
    body = {"email": user.email, "password": "mot-de-passe-long"}
    refused = client.simulate_post("/api/auth/sign-in", json=body, headers={"Origin": "https://evil.example"})
    assert refused.status_code == 403
    assert refused.json["error"]["details"]["reason"] == "origin_not_allowed"
    assert "auth.session_token" not in refused.cookies
    assert client.simulate_post("/api/auth/sign-in", json=body,
                                headers={"Origin": "http://testserver"}).status_code == 200
    assert client.simulate_post("/api/auth/sign-in", json=body).status_code == 200  # no Origin: not a browser
    assert client.simulate_post("/api/auth/sign-in", json=body, headers={"Origin": "null"}).status_code == 403


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
def test_json_routes_refuse_another_content_type_with_415(client, content_type):
    user = make_user(password="mot-de-passe-long")
    raw = f'{{"email": "{user.email}", "password": "mot-de-passe-long"}}'
    headers = {"Content-Type": content_type} if content_type else {}
    answer = client.simulate_post("/api/auth/sign-in", body=raw, headers=headers)
    assert answer.status_code == 415
    assert answer.json["error"]["code"] == "UNSUPPORTED_MEDIA_TYPE"
    assert "auth.session_token" not in answer.cookies
    ok = client.simulate_post("/api/auth/sign-in", body=raw,
                              headers={"Content-Type": "application/json; charset=utf-8"})
    assert ok.status_code == 200


def _request(remote: str, forwarded: str | None):
    env = falcon.testing.create_environ(remote_addr=remote,
                                        headers={"X-Forwarded-For": forwarded} if forwarded else {})
    return falcon.Request(env)


def test_client_ip_uses_the_peer_when_the_header_is_short_or_not_an_address():
    # Fewer entries than trusted proxies: the left-most entry was written by the client itself.
    assert client_ip(_request("192.0.2.1", "203.0.113.9"), 2) == "192.0.2.1"
    assert client_ip(_request("192.0.2.1", "not-an-ip, 198.51.100.7"), 2) == "192.0.2.1"
    assert client_ip(_request("192.0.2.1", "x' OR 1=1, 198.51.100.7"), 2) == "192.0.2.1"
    assert client_ip(_request("192.0.2.1", "203.0.113.9, 198.51.100.7"), 2) == "203.0.113.9"
    assert client_ip(_request("192.0.2.1", "spoofed, 203.0.113.9, 198.51.100.7"), 2) == "203.0.113.9"
    assert client_ip(_request("192.0.2.1", "2001:DB8::1, 198.51.100.7"), 2) == "2001:db8::1"
    assert client_ip(_request("192.0.2.1", "203.0.113.9"), 0) == "192.0.2.1"


def test_rate_limits_are_shared_in_redis_by_default(make_app, config):
    assert load_config({}).rate_limit_storage_url is None  # unset: Redis at REDIS_URL
    first = falcon.testing.TestClient(make_app(rate_limit_storage_url=None))
    second = falcon.testing.TestClient(make_app(rate_limit_storage_url=None))
    ip = _ip()
    for i in range(10):
        assert (first if i % 2 else second).simulate_post("/api/auth/sign-in", remote_addr=ip,
                                                          json={}).status_code != 429
    assert first.simulate_post("/api/auth/sign-in", remote_addr=ip, json={}).status_code == 429


def test_onboarding_reconciliation_is_rate_limited(client):
    ip = _ip()
    path = "/api/organizations/industrial:000000000/onboarding"
    plain = client.simulate_get(path, remote_addr=ip)
    assert "x-ratelimit-limit" not in plain.headers
    for _ in range(10):
        answer = client.simulate_get(path, params={"reconcile": "true"}, remote_addr=ip)
        assert answer.status_code != 429 and answer.headers["x-ratelimit-limit"] == "10"
    assert client.simulate_get(path, params={"reconcile": "true"}, remote_addr=ip).status_code == 429
    assert client.simulate_get(path, remote_addr=ip).status_code != 429
