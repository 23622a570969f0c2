import uuid

import falcon.testing
import pytest

SIGN_IN = "/api/auth/sign-in"


def _ip() -> str:
    """A fresh client address per test, so shared (Redis) counters never leak between tests."""
    n = uuid.uuid4().int
    return f"10.{n % 250}.{(n >> 8) % 250}.{(n >> 16) % 250 + 1}"


def _hit(client, path, ip, method="POST", headers=None):
    return client.simulate_request(method, path, remote_addr=ip, json={}, headers=headers or {})


def test_auth_sensitive_allows_ten_per_minute_with_headers_then_429(client, log_lines):
    ip = _ip()
    answers = [_hit(client, SIGN_IN, ip) for _ in range(10)]
    assert [a.headers["x-ratelimit-limit"] for a in answers] == ["10"] * 10
    assert [a.headers["x-ratelimit-remaining"] for a in answers] == [str(n) for n in range(9, -1, -1)]
    assert all(0 < int(a.headers["x-ratelimit-reset"]) <= 60 for a in answers)
    refused = _hit(client, SIGN_IN, ip)
    assert refused.status_code == 429
    body = refused.json
    assert body["ok"] is False and body["error"]["code"] == "RATE_LIMITED"
    assert body["error"]["requestId"] == refused.headers["x-request-id"]
    retry = body["data"]["retryAfterSeconds"]
    assert 0 < retry <= 60
    assert refused.headers["retry-after"] == str(retry)
    assert "x-ratelimit-limit" not in refused.headers and "x-ratelimit-remaining" not in refused.headers
    warns = [line for line in log_lines() if line["scope"] == "api-rate-limit"]
    assert warns and warns[-1]["level"] == "warn" and warns[-1]["bucket"] == "auth-sensitive"


@pytest.mark.parametrize(
    "path",
    [
        "/api/auth/sign-up",
        "/api/auth/password-reset",
        "/api/auth/password-reset/confirm",
        "/api/auth/email-verification/confirm",
        "/api/auth/magic-link",
    ],
)
def test_every_auth_sensitive_route_is_limited_to_ten(client, path):
    ip = _ip()
    for _ in range(10):
        assert _hit(client, path, ip).status_code != 429
    assert _hit(client, path, ip).status_code == 429


def test_admin_critical_allows_sixty_per_minute(client):
    ip = _ip()
    paths = ["/api/admin/organizations", "/api/auth/assign-role", "/api/notifications/email-smoke"]
    answers = [_hit(client, paths[i % 3], ip, method="GET") for i in range(60)]
    assert all(a.status_code != 429 for a in answers)
    assert answers[0].headers["x-ratelimit-limit"] == "60"
    assert answers[-1].headers["x-ratelimit-remaining"] == "0"
    assert _hit(client, "/api/admin/users", ip, method="GET").status_code == 429


def test_buckets_are_separate_and_other_routes_are_not_limited(client):
    ip = _ip()
    for _ in range(10):
        _hit(client, SIGN_IN, ip)
    assert _hit(client, SIGN_IN, ip).status_code == 429
    assert _hit(client, "/api/admin/organizations", ip, method="GET").status_code != 429
    health = client.simulate_get("/api/health", remote_addr=ip)
    assert health.status_code == 200 and "x-ratelimit-limit" not in health.headers


def test_limits_are_per_client_ip(client):
    first, second = _ip(), _ip()
    for _ in range(10):
        _hit(client, SIGN_IN, first)
    assert _hit(client, SIGN_IN, first).status_code == 429
    assert _hit(client, SIGN_IN, second).headers["x-ratelimit-remaining"] == "9"


def test_client_ip_comes_from_forwarded_for_only_behind_trusted_proxies(make_app):
    proxied = falcon.testing.TestClient(make_app(trusted_proxy_count=1))
    router = "192.0.2.1"
    spoofed_left = _ip()
    for i in range(10):
        # each request comes from another real client (rightmost entry), all through one router
        headers = {"X-Forwarded-For": f"{spoofed_left}, 198.51.100.{i + 1}"}
        assert _hit(proxied, SIGN_IN, router, headers=headers).headers["x-ratelimit-remaining"] == "9"
    direct = falcon.testing.TestClient(make_app(trusted_proxy_count=0))
    for _ in range(10):
        _hit(direct, SIGN_IN, router, headers={"X-Forwarded-For": _ip()})
    assert _hit(direct, SIGN_IN, router, headers={"X-Forwarded-For": _ip()}).status_code == 429


def test_redis_storage_is_shared_by_two_app_instances(make_app, config):
    first = falcon.testing.TestClient(make_app(rate_limit_storage_url=config.redis_url))
    second = falcon.testing.TestClient(make_app(rate_limit_storage_url=config.redis_url))
    ip = _ip()
    for i in range(10):
        client = first if i % 2 == 0 else second
        assert client.simulate_post(SIGN_IN, remote_addr=ip, json={}).status_code != 429
    assert second.simulate_post(SIGN_IN, remote_addr=ip, json={}).status_code == 429
    assert first.simulate_post(SIGN_IN, remote_addr=ip, json={}).status_code == 429


def test_memory_storage_is_per_process(make_app):
    first = falcon.testing.TestClient(make_app(rate_limit_storage_url="memory://"))
    second = falcon.testing.TestClient(make_app(rate_limit_storage_url="memory://"))
    ip = _ip()
    for _ in range(10):
        first.simulate_post(SIGN_IN, remote_addr=ip, json={})
    assert first.simulate_post(SIGN_IN, remote_addr=ip, json={}).status_code == 429
    assert second.simulate_post(SIGN_IN, remote_addr=ip, json={}).status_code != 429
