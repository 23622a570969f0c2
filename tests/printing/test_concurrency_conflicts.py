"""A concurrent change that loses a race (deadlock, serialization failure, unique violation) is run
once more transparently, and answers 409 CONFLICT (never 500) when it loses again."""

from __future__ import annotations

import falcon
import falcon.testing
import pytest
from marshmallow import Schema, fields

from api import conflicts, errors
from api.requests import load
from api.responses import send
from backend.db import database, transaction
from backend.marketplace.models import Universe


class RaceIn(Schema):
    code = fields.String(required=True)


class Racing:
    """Inserts the universe named in the body; `losses` times, a row with its code is there first
    (as a concurrent request would have made it), so the insert hits the unique key."""

    def __init__(self, losses: int) -> None:
        self.losses, self.calls = losses, 0

    def on_post(self, req, resp) -> None:
        body = load(req, RaceIn())
        self.calls += 1
        with transaction():
            if self.calls <= self.losses:
                Universe.create(code=body["code"], label="Concurrent", normalized_label=f"concurrent {self.calls}",
                                sort_order=1)
            Universe.create(code=body["code"], label="Mine", normalized_label=f"mine {self.calls}", sort_order=2)
        send(resp, {"calls": self.calls}, 201)


def _client(resource) -> falcon.testing.TestClient:
    app = falcon.App()
    errors.register(app)
    conflicts.register(app)
    app.add_route("/race", conflicts.retrying(resource))
    return falcon.testing.TestClient(app)


@pytest.mark.committed
def test_a_lost_race_is_run_once_more_with_the_same_body():
    resource = Racing(losses=1)
    with database.connection_context():
        answer = _client(resource).simulate_post("/race", json={"code": "UNIV_RACE_1"})
    assert answer.status_code == 201, answer.json
    assert answer.json["data"] == {"calls": 2}


@pytest.mark.committed
def test_a_race_lost_twice_answers_409_conflict_not_500():
    resource = Racing(losses=5)
    with database.connection_context():
        answer = _client(resource).simulate_post("/race", json={"code": "UNIV_RACE_2"})
    assert answer.status_code == 409, answer.json
    assert answer.json["error"]["code"] == "CONFLICT"
    assert answer.json["error"]["details"] == {"reason": "concurrent_update"}
    assert resource.calls == 2


def test_the_app_wraps_every_responder(app):
    wrapped = [route.resource for route in app.deps.routes]
    assert all(getattr(getattr(resource, name), "retries_conflicts", False)
               for resource in wrapped for name in dir(resource) if name.startswith("on_"))
