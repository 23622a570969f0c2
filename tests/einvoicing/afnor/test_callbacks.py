"""An XP Z12-013 platform's callbacks, over real HTTP: the simulator posts annex A's
`WebhookCallbackContent` to the app's `POST /api/webhooks/afnor` when a flow changes; the
callback is verified (HMAC), stored once per flow state with its processing in the outbox, and
its processing reads the flow again from the platform and applies it as polling does. Polling
stays the safety net for a callback lost."""

from __future__ import annotations

import json
import time
from urllib.parse import urlsplit

import pytest
import requests
from openapi_core import OpenAPI
from openapi_core.contrib.requests import RequestsOpenAPIRequest
from openapi_core.validation.request.exceptions import InvalidRequestBody

from backend import webhook_signature
from backend.db import database
from backend.einvoicing import afnor_callbacks, lifecycle, polling
from backend.einvoicing.models import LifecycleEvent, Transmission, TransmissionEvent
from backend.outbox import OutboxMessage
from tests.einvoicing.afnor.conftest import DESCRIPTIONS
from tests.onboarding.conftest import api_server  # noqa: F401 (the app over real HTTP)

pytestmark = pytest.mark.committed
SECRET = "afnor_callback_secret_test_9f8e7d"


@pytest.fixture
def app(make_app):
    return make_app(afnor_webhook_secret=SECRET)


@pytest.fixture
def connection():
    with database.connection_context():
        yield


@pytest.fixture
def subscribed(platform, api_server):  # noqa: F811
    platform.subscribe(api_server, SECRET)
    yield platform
    platform.subscribe(None)


def deposited(issue, storage, client) -> Transmission:
    sent = lifecycle.dispatch(issue().id, client=client, storage=storage)
    assert sent.status == "sent"
    return sent


def callbacks() -> list[tuple]:
    return list(database.execute_sql(
        "SELECT event_key, flow_id, processing_status FROM einvoice_platform_callback ORDER BY id").fetchall())


def queued() -> list[list]:
    return [message.args for message in OutboxMessage.select(OutboxMessage.args)
            .where(OutboxMessage.actor_name == afnor_callbacks.PROCESSING_ACTOR).order_by(OutboxMessage.id)]


def test_a_callback_delivered_twice_is_stored_queued_and_applied_once(
        connection, subscribed, issue, storage, afnor_client):
    sent = deposited(issue, storage, afnor_client)
    subscribed.faults(duplicate_callbacks=1)
    subscribed.act(sent.provider_flow_id, "ok")
    deliveries = subscribed.deliveries()
    assert [d["status"] for d in deliveries] == [200, 200]
    [(key, flow_id, status)] = callbacks()
    assert (flow_id, status) == (sent.provider_flow_id, "received")
    assert queued() == [[key]]
    assert Transmission.get_by_id(sent.id).status == "sent"  # nothing applied on receipt
    assert afnor_callbacks.process_callback(key, client=afnor_client) == "processed"
    assert afnor_callbacks.process_callback(key, client=afnor_client) is None  # a redelivered message
    acknowledged = Transmission.get_by_id(sent.id)
    assert (acknowledged.status, acknowledged.operator_status) == ("acknowledged", "Ok")
    [move] = TransmissionEvent.select().where(TransmissionEvent.transmission == sent.id,
                                              TransmissionEvent.to_status == "acknowledged")
    assert move.trigger == "callback"
    assert callbacks()[0][2] == "processed"


def test_a_badly_signed_callback_is_refused_and_nothing_is_written(connection, subscribed, issue, storage,
                                                                    afnor_client):
    sent = deposited(issue, storage, afnor_client)
    subscribed.faults(bad_signature_callbacks=1)
    subscribed.act(sent.provider_flow_id, "ok")
    [delivery] = subscribed.deliveries()
    assert delivery["status"] == 401
    answer = requests.post(delivery["url"], data=delivery["body"].encode(), timeout=5,
                           headers={**delivery["headers"], afnor_callbacks.SIGNATURE_HEADER: "sha256=" + "0" * 64})
    assert (answer.status_code, answer.json()["error"]["code"]) == (401, "AUTH_SIGNATURE_WEBHOOK_INVALID")
    assert callbacks() == [] and queued() == []
    assert Transmission.get_by_id(sent.id).status == "sent"


def test_a_lost_callback_is_healed_by_polling(connection, subscribed, issue, storage, afnor_client):
    sent = deposited(issue, storage, afnor_client)
    subscribed.faults(lost_callbacks=1)
    subscribed.act(sent.provider_flow_id, "error", "Fichier vide", code="EmptyFlow")
    assert subscribed.deliveries() == [] and callbacks() == []
    polling.run_pass(polling.start_pass_if_due(1), client=afnor_client, storage=storage)
    rejected = Transmission.get_by_id(sent.id)
    assert (rejected.status, rejected.last_error_message) == ("rejected", "Fichier vide")


def test_an_incoming_status_s_callback_reports_it_on_the_invoice_s_flow(connection, subscribed, issue, storage,
                                                                         afnor_client):
    sent = deposited(issue, storage, afnor_client)
    subscribed.act(sent.provider_flow_id, "ok")
    subscribed.lifecycle(sent.provider_flow_id, 204)
    keys = [key for key, _, _ in callbacks()]
    assert len(keys) == 2
    for key in reversed(keys):  # in any order: the status first, then the acknowledgement
        assert afnor_callbacks.process_callback(key, client=afnor_client) == "processed"
    transmission = Transmission.get_by_id(sent.id)
    assert (transmission.status, transmission.lifecycle_code) == ("acknowledged", 204)
    assert [e.code for e in LifecycleEvent.select().where(LifecycleEvent.transmission == sent.id)] == [204]


def test_every_callback_the_platform_sends_is_annex_a_s_webhook_callback_content(
        connection, subscribed, issue, storage, afnor_client, api_server):  # noqa: F811
    sent = deposited(issue, storage, afnor_client)
    subscribed.act(sent.provider_flow_id, "error", "Schéma invalide", code="InvalidSchema")
    subscribed.lifecycle(sent.provider_flow_id, 213, "refusée", "REJ_SEMAN")
    spec = json.loads((DESCRIPTIONS / "flow-service.json").read_text())
    [callback] = spec["components"]["callbacks"]["WebhookCallback"].values()
    spec["paths"] = {"/api/webhooks/afnor": callback}
    spec["servers"] = [{"url": api_server}]
    spec["security"] = []  # the PA's bearer token guards its API, not the subscriber's callback URL
    described = OpenAPI.from_dict(spec)
    deliveries = subscribed.deliveries()
    assert len(deliveries) == 2
    for delivery in deliveries:
        assert urlsplit(delivery["url"]).path == "/api/webhooks/afnor"
        request = requests.Request("POST", delivery["url"], data=delivery["body"].encode(),
                                   headers=delivery["headers"]).prepare()
        described.validate_request(RequestsOpenAPIRequest(request))
    # The check itself: a property the standard does not define is refused.
    body = json.dumps({**json.loads(deliveries[0]["body"]), "event": "flow.updated"}).encode()
    request = requests.Request("POST", deliveries[0]["url"], data=body, headers=deliveries[0]["headers"]).prepare()
    with pytest.raises(InvalidRequestBody):
        described.validate_request(RequestsOpenAPIRequest(request))


def signed(body: bytes, issued_at: int) -> dict:
    return {"Content-Type": "application/json", afnor_callbacks.ISSUED_AT_HEADER: str(issued_at),
            afnor_callbacks.SIGNATURE_HEADER: webhook_signature.signature_of(body, SECRET)}


def test_a_callback_of_a_flow_the_platform_does_not_know_is_ignored_and_a_stale_one_refused(
        connection, platform, afnor_client, api_server):  # noqa: F811
    body = json.dumps({"flowInfo": {"flowId": "afnor-unknown", "updatedAt": "2026-12-01T10:00:00.000Z"}}).encode()
    url = f"{api_server}/api/webhooks/afnor"
    stale = requests.post(url, data=body, headers=signed(body, int(time.time()) - 301), timeout=5)
    assert (stale.status_code, stale.json()["error"]["code"]) == (401, "AUTH_SIGNATURE_WEBHOOK_INVALID")
    assert callbacks() == []
    answers = [requests.post(url, data=body, headers=signed(body, int(time.time())), timeout=5) for _ in range(2)]
    assert [a.json()["data"] for a in answers] == [{"received": True, "duplicate": False},
                                                   {"received": True, "duplicate": True}]
    [(key, _, _)] = callbacks()
    assert afnor_callbacks.process_callback(key, client=afnor_client) == "ignored"
    assert callbacks()[0][2] == "ignored"
