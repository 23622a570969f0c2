import falcon.testing

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
