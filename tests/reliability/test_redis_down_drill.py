"""The Redis-down drill: the rate-limit counters' Redis stops; every route that counts requests
answers 503 `SERVICE_UNAVAILABLE` with `Retry-After` (closed, never let through uncounted, never a
500), and answers as before once Redis is back."""

from __future__ import annotations

import uuid

import falcon.testing
import pytest

from api.openapi import responders
from api.ratelimit import AUTH_SENSITIVE, COUNTERS_RETRY_AFTER_SECONDS, bucket_for
from backend import embedded

pytestmark = [pytest.mark.drills]


def _limited(app) -> list[tuple[str, str]]:
    """(method, path) of every responder behind a rate limit, its path parameters filled in."""
    return sorted((method.upper(), route.path.replace("{", "").replace("}", ""))
                  for route in app.deps.routes if bucket_for(route.path) is not None
                  for method, _ in responders(route))


def _answers(client, limited) -> dict[tuple[str, str], tuple[int, str | None, str | None]]:
    ip = f"10.77.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250 + 1}"
    out = {}
    for method, path in limited:
        answer = client.simulate_request(method, path, remote_addr=ip, json={})
        out[method, path] = (answer.status_code, answer.headers.get("retry-after"),
                             (answer.json or {}).get("error", {}).get("code") if answer.status_code >= 400 else None)
    return out


def test_with_redis_stopped_every_limited_route_answers_503_with_retry_after(make_app, tmp_path):
    url = embedded.ensure_redis(tmp_path)
    try:
        app = make_app(rate_limit_storage_url=url)
        client, limited = falcon.testing.TestClient(app), _limited(app)
        auth = [(method, path) for method, path in limited if bucket_for(path) == AUTH_SENSITIVE]
        assert len(auth) >= 6 and len(limited) > len(auth)
        before = _answers(client, limited)
        assert all(status < 500 for status, _, _ in before.values()), before
        embedded.stop_redis(tmp_path)
        down = _answers(client, limited)
        assert down == {key: (503, str(COUNTERS_RETRY_AFTER_SECONDS), "SERVICE_UNAVAILABLE") for key in limited}
        embedded.ensure_redis(tmp_path)
        after = _answers(client, limited)
        assert all(status < 500 for status, _, _ in after.values()), after
    finally:
        embedded.stop_redis(tmp_path)
