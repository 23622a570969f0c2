import falcon.testing
import pytest

from tests.support import Echo


def test_health_payload_has_the_fields_of_specification_a(client, config):
    data = client.simulate_get("/api/health").json["data"]
    assert data["service"] == config.service_name
    assert data["status"] == "ok"
    assert data["environment"] == "test"
    assert isinstance(data["uptimeSeconds"], float)
    assert set(data["telemetry"]) == {"apiRequestsTotal", "apiErrorsTotal"}


def test_counters_count_requests_and_only_5xx_as_errors(app):
    app.add_route("/api/test/echo", Echo())
    client = falcon.testing.TestClient(app)
    before = client.simulate_get("/api/health").json["data"]["telemetry"]
    client.simulate_get("/api/missing")  # 404: a request, not an error
    client.simulate_get("/api/test/echo")  # 500
    after = client.simulate_get("/api/health").json["data"]["telemetry"]
    assert after["apiRequestsTotal"] == before["apiRequestsTotal"] + 3
    assert after["apiErrorsTotal"] == before["apiErrorsTotal"] + 1


def test_counters_start_at_zero_for_a_new_process(make_app):
    client = falcon.testing.TestClient(make_app())
    telemetry = client.simulate_get("/api/health").json["data"]["telemetry"]
    assert telemetry == {"apiRequestsTotal": 1, "apiErrorsTotal": 0}


def test_health_does_not_touch_the_database(app, monkeypatch):
    from backend import db

    def refuse():
        raise AssertionError("health opened a database connection")

    monkeypatch.setattr(db, "open_connection", refuse)
    assert falcon.testing.TestClient(app).simulate_get("/api/health").status_code == 200


def test_health_answer_is_its_schemas_field_by_field_dump(client):
    # `HealthOut.dump` answers the resource's dict as built: it must be what the fields would dump.
    from marshmallow import Schema

    from schemas.health import HealthOut

    data = client.simulate_get("/api/health").json["data"]
    assert Schema.dump(HealthOut(), data) == data
    assert list(data) == list(HealthOut().fields)


def test_readiness_is_200_when_postgresql_and_redis_answer_and_head_is_allowed_on_both(client):
    ready = client.simulate_get("/api/health/ready")
    assert (ready.status_code, ready.json["data"]) == (200, {"status": "ready"})
    for path in ("/api/health", "/api/health/ready"):
        head = client.simulate_head(path)
        assert (head.status_code, head.content) == (200, b"")


def test_readiness_is_503_naming_redis_when_redis_is_unreachable(make_app):
    client = falcon.testing.TestClient(make_app(redis_url="redis://127.0.0.1:9/0"))  # nothing listens there
    answer = client.simulate_get("/api/health/ready")
    assert answer.status_code == 503 and answer.json["error"]["code"] == "SERVICE_UNAVAILABLE"
    assert answer.json["error"]["details"]["problems"][0].startswith("Redis: ")
    assert client.simulate_head("/api/health/ready").status_code == 503
    assert client.simulate_get("/api/health").status_code == 200  # liveness: the process answers


@pytest.mark.committed  # the process's database is swapped: no test transaction around it
def test_readiness_is_503_naming_postgresql_and_its_cause_when_the_database_is_unreachable(make_app, config):
    from backend.runtime import boot

    try:
        client = falcon.testing.TestClient(make_app(database_url="postgresql://nobody:pw@127.0.0.1:9/none"))
        answer = client.simulate_get("/api/health/ready")
        assert client.simulate_get("/api/health").status_code == 200
    finally:
        boot(config, role="test")  # the session's database again
    assert answer.status_code == 503
    problems = answer.json["error"]["details"]["problems"]
    assert len(problems) == 1 and problems[0].startswith("PostgreSQL: ") and "refused" in problems[0]
    assert "pw" not in answer.text
