"""The API's JSON writer (`api.json_media`): orjson, with the standard library's output and refusals."""

import json
from collections import namedtuple
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal

import falcon.testing
import pytest

from api import json_media
from api.responses import send


def standard(obj) -> bytes:
    """What the API wrote before orjson, with compact separators."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


Point = namedtuple("Point", "x y")


@dataclass
class Row:
    id: str


WRITTEN_ALIKE = [
    {"ok": True, "data": {"zeta": 1, "alpha": [1, 2.5, -3, None, False], "nested": {"b": {}, "a": []}}},
    {"name": "Boulangerie Père Noël à Évry", "emoji": "🍞", "cjk": "好", "separators": "\u2028\u2029"},
    {"control": "tab\t newline\n quote\" backslash\\ nul\x00 del\x7f bell\x07"},
    {"floats": [0.1, 1.5, 1234.5678, 0.047, -0.0, 3.0], "cents": 12345, "big": 2**63 - 1},
    ["a", ("tuple", 1), []],
    # orjson refuses these; the standard library writes them, as it did before.
    {"beyond64bits": 2**70},
    {1: "integer key", "2": "string key"},
    {True: "bool key", None: "null key"},
    {"point": Point(1, 2)},
]


@pytest.mark.parametrize("obj", WRITTEN_ALIKE)
def test_answers_are_the_standard_librarys_json(obj):
    assert json_media.dumps(obj) == standard(obj)


@pytest.mark.parametrize("value", [datetime(2026, 11, 24, tzinfo=UTC), date(2026, 11, 24), Decimal("12.50"),
                                   Row("x"), {1, 2}, b"bytes"])
def test_values_json_has_no_type_for_are_refused_as_before(value):
    with pytest.raises(TypeError):
        json.dumps({"value": value})
    with pytest.raises(TypeError):
        json_media.dumps({"value": value})


def test_a_circular_answer_is_refused():
    loop: dict = {}
    loop["self"] = loop
    with pytest.raises((TypeError, ValueError)):
        json_media.dumps(loop)


class Probe:
    answers: dict = {}

    def on_get(self, req, resp, name) -> None:
        send(resp, self.answers[name])


@pytest.fixture
def probe_client(app):
    Probe.answers = {
        "text": {"city": "Saint-Étienne", "zeta": 1, "alpha": 2},
        "datetime": {"at": datetime(2026, 11, 24, tzinfo=UTC)},
        "decimal": {"amount": Decimal("12.50")},
    }
    app.add_route("/api/test/json/{name}", Probe())
    return falcon.testing.TestClient(app)


def test_the_app_writes_utf8_in_insertion_order(probe_client):
    resp = probe_client.simulate_get("/api/test/json/text")
    assert resp.status_code == 200
    assert resp.headers["content-type"] == "application/json"
    assert resp.content == '{"ok":true,"data":{"city":"Saint-Étienne","zeta":1,"alpha":2}}'.encode()


@pytest.mark.parametrize("name", ["datetime", "decimal"])
def test_an_answer_holding_a_value_json_has_no_type_for_is_a_logged_500(probe_client, log_lines, name):
    # Rendering fails after the middleware ran: Falcon answers the status alone (as with json.dumps).
    resp = probe_client.simulate_get(f"/api/test/json/{name}")
    assert resp.status_code == 500
    assert resp.content == b""
    errors = [line for line in log_lines() if line["level"] == "error"]
    assert errors and errors[-1]["message"] == "uncaught exception"
    assert "is not JSON serializable" in errors[-1]["stack"]
