import re
import uuid

import pytest

from tests.support import Echo

UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


@pytest.fixture
def echo_client(app):
    import falcon.testing

    app.add_route("/api/test/echo", Echo())
    return falcon.testing.TestClient(app)


def test_health_answers_in_the_envelope_with_a_request_id(client):
    resp = client.simulate_get("/api/health")
    assert resp.status_code == 200
    assert resp.json["ok"] is True
    assert resp.json["data"]["status"] == "ok"
    assert UUID4.match(resp.headers["x-request-id"])


def test_unknown_route_is_404_not_found_in_the_envelope(client):
    resp = client.simulate_get("/api/nothing-here")
    assert resp.status_code == 404
    assert resp.json["ok"] is False
    assert resp.json["error"]["code"] == "NOT_FOUND"
    assert resp.json["error"]["requestId"] == resp.headers["x-request-id"]


def test_unknown_method_is_405_method_not_allowed(client):
    resp = client.simulate_delete("/api/health")
    assert resp.status_code == 405
    assert resp.json["error"]["code"] == "METHOD_NOT_ALLOWED"
    assert "GET" in resp.headers["allow"]


def test_schema_errors_are_400_with_field_details(echo_client):
    resp = echo_client.simulate_post("/api/test/echo", json={"name": "", "count": "x"})
    assert resp.status_code == 400
    error = resp.json["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert set(error["details"]["fields"]) == {"name", "count"}


def test_malformed_json_is_400(echo_client):
    resp = echo_client.simulate_post(
        "/api/test/echo", body=b"{not json", headers={"content-type": "application/json"}
    )
    assert resp.status_code == 400
    assert resp.json["error"]["code"] == "VALIDATION_ERROR"


def test_valid_body_is_accepted(echo_client):
    resp = echo_client.simulate_post("/api/test/echo", json={"name": "ok"})
    assert resp.status_code == 201
    assert resp.json == {"ok": True, "data": {"name": "ok", "count": 1}}


def test_json_body_over_one_mebibyte_is_refused_with_413(echo_client):
    body = b'{"name": "' + b"a" * (1024 * 1024) + b'"}'
    resp = echo_client.simulate_post("/api/test/echo", body=body, headers={"content-type": "application/json"})
    assert resp.status_code == 413
    assert resp.json["error"]["code"] == "PAYLOAD_TOO_LARGE"


def test_body_of_exactly_one_mebibyte_is_read(echo_client):
    padding = 1024 * 1024 - len(b'{"name": "x", "pad": ""}')
    body = b'{"name": "x", "pad": "' + b" " * padding + b'"}'
    assert len(body) == 1024 * 1024
    resp = echo_client.simulate_post("/api/test/echo", body=body, headers={"content-type": "application/json"})
    assert resp.status_code == 400  # read and parsed: `pad` is an unknown field
    assert "pad" in resp.json["error"]["details"]["fields"]


def test_uncaught_exception_is_500_logged_with_request_id_and_stack(echo_client, log_lines):
    resp = echo_client.simulate_get("/api/test/echo", headers={"x-request-id": "trace-500"})
    assert resp.status_code == 500
    assert resp.json["error"] == {
        "code": "INTERNAL_ERROR",
        "message": "an internal error occurred",
        "requestId": "trace-500",
    }
    assert "boom" not in resp.text
    errors = [line for line in log_lines() if line["level"] == "error"]
    assert errors and errors[-1]["requestId"] == "trace-500"
    assert "RuntimeError: boom" in errors[-1]["stack"]


def test_generated_request_ids_are_distinct_uuid4s():
    from backend.context import new_uuid4

    ids = [new_uuid4() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    for value in ids:
        parsed = uuid.UUID(value)
        assert UUID4.match(value) and parsed.version == 4 and parsed.variant == uuid.RFC_4122 and str(parsed) == value


@pytest.mark.parametrize("candidate", ["abc-123", "a.b_c:d-e", "x" * 128])
def test_valid_client_request_id_is_kept(client, candidate):
    resp = client.simulate_get("/api/health", headers={"x-request-id": candidate})
    assert resp.headers["x-request-id"] == candidate


@pytest.mark.parametrize("candidate", ["x" * 129, "has space", "semi;colon", "é", "a/b"])
def test_invalid_client_request_id_is_replaced_by_a_uuid4(client, candidate):
    resp = client.simulate_get("/api/health", headers={"x-request-id": candidate})
    assert resp.headers["x-request-id"] != candidate
    assert UUID4.match(resp.headers["x-request-id"])


def test_request_id_is_echoed_on_errors_and_differs_per_request(client):
    first = client.simulate_get("/api/nope").headers["x-request-id"]
    second = client.simulate_get("/api/nope").headers["x-request-id"]
    assert first != second
    assert uuid.UUID(first).version == 4


def test_openapi_document_and_offline_docs_page(client):
    spec = client.simulate_get("/api/openapi.json")
    assert spec.status_code == 200
    assert spec.json["openapi"].startswith("3.")
    assert "/api/health" in spec.json["paths"]
    assert "HealthEnvelope" in spec.json["components"]["schemas"]
    page = client.simulate_get("/api/docs")
    assert page.status_code == 200
    assert "/api/docs/static/swagger-ui-bundle.js" in page.text
    assert "http" not in page.text.replace("http-equiv", "")  # nothing fetched from the internet
    bundle = client.simulate_get("/api/docs/static/swagger-ui-bundle.js")
    assert bundle.status_code == 200 and len(bundle.content) > 100_000
