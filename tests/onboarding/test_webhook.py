"""`POST /api/webhooks/esign`: HMAC over the raw body, issued-at window, store once, answer at once."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

import pytest

from backend import clock
from backend.onboarding.models import ProcessingStatus, SignatureEvent
from backend.outbox import OutboxMessage
from tests.conftest import TEST_WEBHOOK_SECRET
from tests.onboarding.conftest import event_body, signed_headers

PATH = "/api/webhooks/esign"


def _post(client, body: bytes, headers: dict):
    return client.simulate_post(PATH, body=body, headers=headers)


def _assert_refused(answer) -> None:
    assert answer.status_code == 401
    assert answer.json["error"]["code"] == "AUTH_SIGNATURE_WEBHOOK_INVALID"
    assert SignatureEvent.select().count() == 0


def test_a_signed_event_is_stored_with_its_processing_queued(client):
    body = event_body("signer.link_opened", "prov-1", event_id="evt-1")
    answer = _post(client, body, signed_headers(body, retry=3))
    assert answer.status_code == 200
    assert answer.json == {"ok": True, "data": {"received": True, "duplicate": False}}
    event = SignatureEvent.get(SignatureEvent.event_id == "evt-1")
    assert (event.event_name, event.provider_signature_request_id, event.retry_attempt) == (
        "signer.link_opened", "prov-1", 3)
    assert event.processing_status == ProcessingStatus.RECEIVED
    assert event.payload == json.loads(body)
    queued = list(OutboxMessage.select().where(OutboxMessage.actor_name == "process_signature_event"))
    assert [row.args for row in queued] == [["evt-1"]]


def test_a_replayed_event_is_acknowledged_as_duplicate_and_queued_once(client):
    body = event_body("signer.notified", "prov-1", event_id="evt-dup")
    assert _post(client, body, signed_headers(body))
    again = _post(client, body, signed_headers(body, retry=2))
    assert again.status_code == 200 and again.json["data"] == {"received": True, "duplicate": True}
    assert SignatureEvent.select().where(SignatureEvent.event_id == "evt-dup").count() == 1
    assert OutboxMessage.select().where(OutboxMessage.actor_name == "process_signature_event").count() == 1


@pytest.mark.parametrize("tamper", ["body", "secret", "missing", "prefix"])
def test_a_bad_signature_is_refused(client, tamper):
    body = event_body("signature_request.done", "prov-1")
    headers = signed_headers(body, secret="another-secret" if tamper == "secret" else TEST_WEBHOOK_SECRET)
    if tamper == "body":
        body = body.replace(b"prov-1", b"prov-2")
    elif tamper == "missing":
        del headers["X-Esign-Signature-256"]
    elif tamper == "prefix":
        headers["X-Esign-Signature-256"] = headers["X-Esign-Signature-256"].removeprefix("sha256=")
    _assert_refused(_post(client, body, headers))


@pytest.mark.parametrize("issued_at", [None, "", "yesterday", "-301", "+301", "+3600"])
def test_a_missing_unreadable_stale_or_future_issued_at_is_refused(client, issued_at):
    body = event_body("signature_request.done", "prov-1")
    now = int(time.time())  # the server's clock is frozen on this whole second: 301 s is 301 s
    headers = signed_headers(body, issued_at=now)
    if issued_at is None:
        del headers["X-Esign-Issued-At"]
    elif issued_at[:1] in "+-" and issued_at:
        headers["X-Esign-Issued-At"] = str(now + int(issued_at))
    else:
        headers["X-Esign-Issued-At"] = issued_at
    with clock.frozen_at(datetime.fromtimestamp(now, UTC)):
        _assert_refused(_post(client, body, headers))


def test_an_issued_at_within_the_window_is_accepted(client):
    body = event_body("signer.notified", "prov-1")
    assert _post(client, body, signed_headers(body, issued_at=int(time.time()) - 290)).status_code == 200


def test_without_a_configured_secret_every_webhook_is_refused(make_app):
    import falcon.testing

    client = falcon.testing.TestClient(make_app(esign_webhook_secret=None))
    body = event_body("signer.notified", "prov-1")
    _assert_refused(_post(client, body, signed_headers(body)))


@pytest.mark.parametrize("body", [b"not json", b"[]", b'{"event_name": "signer.done"}', b'{"event_id": "", '
                                  b'"event_name": "signer.done"}'])
def test_a_signed_but_malformed_event_is_a_validation_error(client, body):
    answer = _post(client, body, signed_headers(body))
    assert answer.status_code == 400 and answer.json["error"]["code"] == "VALIDATION_ERROR"


def test_unknown_fields_are_kept_and_a_missing_request_id_is_accepted(client):
    body = json.dumps({"event_id": "evt-x", "event_name": "signer.done", "extra": {"kept": True}}).encode()
    assert _post(client, body, signed_headers(body)).status_code == 200
    event = SignatureEvent.get(SignatureEvent.event_id == "evt-x")
    assert event.payload["extra"] == {"kept": True} and event.provider_signature_request_id is None


def test_webhook_logs_carry_neither_the_secret_nor_the_signature(client, log_lines):
    body = event_body("signer.notified", "prov-1")
    headers = signed_headers(body)
    _post(client, body, headers)
    _post(client, body, signed_headers(body, secret="wrong-secret-value"))
    text = log_lines.raw()
    received = [line for line in log_lines() if line["scope"] == "esign.webhook"]
    assert [line["message"] for line in received] == ["webhook received", "webhook refused"]
    assert received[1]["reason"] == "signature_mismatch"
    assert TEST_WEBHOOK_SECRET not in text
    assert headers["X-Esign-Signature-256"].removeprefix("sha256=") not in text


def test_the_webhook_is_described_in_the_openapi_document(client):
    document = client.simulate_get("/api/openapi.json").json
    operation = document["paths"]["/api/webhooks/esign"]["post"]
    assert operation["x-access"] == "signature"
    assert "WebhookAckEnvelope" in json.dumps(operation["responses"]["200"])
    assert {"EsignWebhookEventIn", "WebhookAckOut"} <= set(document["components"]["schemas"])
