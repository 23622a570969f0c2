"""`GET /api/metrics`: Prometheus text for an admin or the bearer token, with request, outbox,
queue, webhook, invoice and transmission figures."""

from __future__ import annotations

import falcon.testing
from prometheus_client.parser import text_string_to_metric_families

from backend import outbox
from backend.db import transaction
from tests.factories import make_user, signed_in

TOKEN = "metrics-token-0123456789"


def _samples(text: str) -> dict[tuple[str, tuple], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_metrics_need_an_admin_or_the_token(make_app):
    client = falcon.testing.TestClient(make_app(metrics_token=TOKEN))
    assert client.simulate_get("/api/metrics").status_code == 401
    assert client.simulate_get("/api/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 403
    assert client.simulate_get("/api/metrics", headers=signed_in(make_user(roles=["industrial"]))).status_code == 403
    by_token = client.simulate_get("/api/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert by_token.status_code == 200 and by_token.headers["content-type"].startswith("text/plain")
    assert client.simulate_get("/api/metrics", headers=signed_in(make_user(roles=["admin"]))).status_code == 200


def test_without_a_configured_token_no_bearer_is_accepted(make_app):
    client = falcon.testing.TestClient(make_app(metrics_token=None))
    assert client.simulate_get("/api/metrics", headers={"Authorization": "Bearer "}).status_code == 401
    assert client.simulate_get("/api/metrics", headers={"Authorization": "Bearer x"}).status_code == 403


def test_metrics_count_requests_by_route_template_and_read_the_stored_figures(make_app):
    client = falcon.testing.TestClient(make_app(metrics_token=TOKEN))
    client.simulate_get("/api/health")
    client.simulate_get("/api/admin/organizations/industrial:123")  # 401, counted under its template
    with transaction():
        outbox.enqueue("record_probe_never_sent", 1)  # no hand-over in this rolled-back test
    samples = _samples(client.simulate_get("/api/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).text)
    assert samples[("vitrine_http_requests_total",
                    (("method", "GET"), ("route", "/api/health"), ("status", "200")))] == 1
    assert samples[("vitrine_http_requests_total", (("method", "GET"),
                    ("route", "/api/admin/organizations/{organization_id}"), ("status", "401")))] == 1
    assert ("vitrine_http_request_duration_seconds_count", (("method", "GET"), ("route", "/api/health"))) in samples
    assert samples[("vitrine_outbox_rows", (("state", "unsent"),))] >= 1
    assert ("vitrine_outbox_oldest_not_done_seconds", ()) in samples
    assert samples[("vitrine_queue_dead", (("queue", "default"),))] >= 0
    assert "industrial:123" not in client.simulate_get(
        "/api/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).text  # path values never become labels


def test_webhook_events_are_counted_by_status(make_app):
    from tests.onboarding.conftest import event_body, signed_headers

    client = falcon.testing.TestClient(make_app(metrics_token=TOKEN))
    body = event_body("signer.link_opened", "prov-metrics", event_id="evt-metrics")
    assert client.simulate_post("/api/webhooks/esign", body=body, headers=signed_headers(body)).status_code == 200
    samples = _samples(client.simulate_get("/api/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).text)
    assert samples[("vitrine_webhook_events", (("status", "received"),))] == 1


def test_request_metrics_expose_what_prometheus_clients_counter_and_histogram_would():
    from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

    from api.metrics import LATENCY_BUCKETS, RequestMetrics

    ours = RequestMetrics()
    registry = CollectorRegistry()
    counter = Counter("vitrine_http_requests", "API requests answered", ("route", "method", "status"),
                      registry=registry)
    histogram = Histogram("vitrine_http_request_duration_seconds", "API request latency", ("route", "method"),
                          registry=registry, buckets=LATENCY_BUCKETS)
    observations = [("/api/health", "GET", 200, 0.0004), ("/api/health", "GET", 200, 0.005),
                    ("/api/health", "GET", 500, 0.0051), ("/api/auth/session", "GET", 401, 0.25),
                    ("/api/auth/sign-in", "POST", 200, 2.6), ("unmatched", "GET", 404, 11.0)]
    for route, method, status, seconds in observations:
        ours.observe(route=route, method=method, status=status, seconds=seconds)
        counter.labels(route, method, str(status)).inc()
        histogram.labels(route, method).observe(seconds)

    def series(registry) -> dict:  # every sample but the creation times, which differ by construction
        return {key: value for key, value in _samples(generate_latest(registry).decode()).items()
                if not key[0].endswith("_created")}

    def created(registry) -> set:
        return {key for key in _samples(generate_latest(registry).decode()) if key[0].endswith("_created")}

    assert series(ours.registry) == series(registry)
    assert created(ours.registry) == created(registry)
    assert series(ours.registry)[("vitrine_http_request_duration_seconds_bucket",
                                  (("le", "0.005"), ("method", "GET"), ("route", "/api/health")))] == 2
