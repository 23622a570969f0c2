"""The e-signature simulator over HTTP: provider API v3, signed webhooks with retries, faults."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from ops.simulators.esign_store import minimal_pdf
from tests.conftest import TEST_WEBHOOK_SECRET
from tests.onboarding.conftest import API_KEY, wait_until

PDF = minimal_pdf("Contrat cadre")
AUTH = {"Authorization": f"Bearer {API_KEY}"}


class Receiver:
    """A stand-in for our webhook endpoint: records deliveries, fails the first `failures`."""

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.received: list[dict] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.received.append({"path": self.path, "body": body, "headers": dict(self.headers)})
                status = 500 if len(receiver.received) <= receiver.failures else 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def names(self) -> list[str]:
        return [json.loads(r["body"])["event_name"] for r in self.received]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    made: list[Receiver] = []

    def make(failures: int = 0) -> Receiver:
        made.append(Receiver(failures))
        return made[-1]

    yield make
    for r in made:
        r.close()


def _envelope(simulator, *, delivery_mode: str = "email") -> str:
    api = simulator.api_url
    created = requests.post(f"{api}/signature_requests", headers=AUTH, timeout=5, json={
        "name": "Onboarding", "external_id": "ext-1", "delivery_mode": delivery_mode, "ordered_signers": True,
        "info": {"locale": "fr"}}).json()
    rid = created["id"]
    document = requests.post(f"{api}/signature_requests/{rid}/documents", headers=AUTH, timeout=5,
                             files={"file": ("contract.pdf", PDF, "application/pdf")},
                             data={"parse_anchors": "true"}).json()
    signer = requests.post(f"{api}/signature_requests/{rid}/signers", headers=AUTH, timeout=5, json={
        "info": {"first_name": "Ada", "last_name": "Martin", "email": "ada@example.com", "locale": "fr"},
        "signature_level": "qualified_electronic_signature", "signature_authentication_mode": None,
        "fields": [{"document_id": document["id"], "type": "signature", "page": 1, "x": 10, "y": 20}]})
    assert signer.status_code == 201, signer.text
    assert requests.post(f"{api}/signature_requests/{rid}/activate", headers=AUTH, timeout=5).status_code == 201
    return rid


def test_api_calls_without_the_bearer_key_are_refused(simulator):
    url = f"{simulator.api_url}/signature_requests"
    assert requests.post(url, json={}, timeout=5).status_code == 401
    assert requests.post(url, json={}, headers={"Authorization": "Bearer wrong"}, timeout=5).status_code == 401


def test_activation_sends_signed_webhooks_and_the_request_never_signs_by_itself(make_simulator, receiver):
    sink = receiver()
    simulator = make_simulator(callback_url=sink.url)
    rid = _envelope(simulator)
    wait_until(lambda: len(sink.received) == 2)
    assert sink.names() == ["signature_request.activated", "signer.notified"]
    delivery = sink.received[0]
    assert delivery["path"] == "/api/webhooks/esign"
    expected = "sha256=" + hmac.new(TEST_WEBHOOK_SECRET.encode(), delivery["body"], hashlib.sha256).hexdigest()
    assert delivery["headers"]["X-Esign-Signature-256"] == expected
    assert delivery["headers"]["X-Esign-Issued-At"].isdigit()
    assert delivery["headers"]["X-Esign-Retry"] == "1"
    event = json.loads(delivery["body"])
    assert event["data"]["signature_request"] == {"id": rid, "status": "ongoing", "external_id": "ext-1"}
    request = requests.get(f"{simulator.api_url}/signature_requests/{rid}", headers=AUTH, timeout=5).json()
    assert request["status"] == "ongoing"
    assert request["signers"][0]["signature_link"] == f"{simulator.url}/sign/{rid}"


def test_control_sign_sends_signer_done_then_request_done_and_serves_signed_files(make_simulator, receiver):
    sink = receiver()
    simulator = make_simulator(callback_url=sink.url)
    rid = _envelope(simulator, delivery_mode="none")
    answer = requests.post(f"{simulator.url}/_control/signature_requests/{rid}/sign", timeout=5)
    assert answer.json() == {"id": rid, "status": "done"}
    wait_until(lambda: len(sink.received) == 3)
    assert sink.names() == ["signature_request.activated", "signer.done", "signature_request.done"]
    request = requests.get(f"{simulator.api_url}/signature_requests/{rid}", headers=AUTH, timeout=5).json()
    document_id, signer_id = request["documents"][0]["id"], request["signers"][0]["id"]
    signed = requests.get(f"{simulator.api_url}/signature_requests/{rid}/documents/{document_id}/download",
                          headers=AUTH, timeout=5)
    assert signed.headers["Content-Type"] == "application/pdf" and b"signed at esign simulator" in signed.content
    trail = requests.get(f"{simulator.api_url}/signature_requests/{rid}/signers/{signer_id}/audit_trails/download",
                         headers=AUTH, timeout=5)
    assert trail.status_code == 200 and trail.content.startswith(b"%PDF")


def test_signer_page_offers_open_sign_and_decline(simulator):
    rid = _envelope(simulator)
    page = requests.get(f"{simulator.url}/sign/{rid}", timeout=5).text
    assert all(f'action="/sign/{rid}/{action}"' in page for action in ("open", "sign", "decline"))
    declined = requests.post(f"{simulator.url}/sign/{rid}/decline", timeout=5)
    assert declined.status_code == 200 and ">declined<" in declined.text  # followed the 303 to the page


def test_failed_deliveries_are_retried_with_the_attempt_number(make_simulator, receiver):
    sink = receiver(failures=2)
    simulator = make_simulator(callback_url=sink.url)
    _envelope(simulator, delivery_mode="none")
    wait_until(lambda: len(sink.received) == 3)
    assert [r["headers"]["X-Esign-Retry"] for r in sink.received] == ["1", "2", "3"]
    assert len({json.loads(r["body"])["event_id"] for r in sink.received}) == 1


def test_deliveries_stop_after_eight_retries(make_simulator, receiver):
    sink = receiver(failures=100)
    simulator = make_simulator(callback_url=sink.url, backoff=(0.01,) * 8)
    _envelope(simulator, delivery_mode="none")
    wait_until(lambda: len(sink.received) == 9 and simulator.sender.idle())
    assert [int(r["headers"]["X-Esign-Retry"]) for r in sink.received] == list(range(1, 10))


def test_duplicate_reversed_and_dropped_webhook_faults(make_simulator, receiver):
    sink = receiver()
    simulator = make_simulator(callback_url=sink.url)
    control = f"{simulator.url}/_control"
    rid = _envelope(simulator, delivery_mode="none")
    wait_until(lambda: len(sink.received) == 1)
    faults = requests.post(f"{control}/faults", json={"duplicate_webhooks": True, "reverse_webhooks": True},
                           timeout=5).json()
    assert faults["duplicate_webhooks"] and faults["reverse_webhooks"]
    requests.post(f"{control}/signature_requests/{rid}/sign", timeout=5)
    wait_until(lambda: len(sink.received) == 5)
    assert sink.names()[1:] == ["signature_request.done"] * 2 + ["signer.done"] * 2
    requests.post(f"{control}/faults", json={"duplicate_webhooks": False, "drop_webhooks": True}, timeout=5)
    requests.post(f"{control}/signature_requests/{rid}/emit", json={"event_name": "signer.link_opened"}, timeout=5)
    deliveries = wait_until(lambda: [d for d in requests.get(f"{control}/deliveries", timeout=5).json()["deliveries"]
                                     if d["status"] == "dropped"])
    assert deliveries[0]["eventName"] == "signer.link_opened"
    assert len(sink.received) == 5


def test_api_fault_switches_answer_429_503_and_400_on_anchor_parsing(simulator):
    control = f"{simulator.url}/_control/faults"
    requests.post(control, json={"rate_limited_calls": 1, "unavailable_calls": 1}, timeout=5)
    url = f"{simulator.api_url}/signature_requests"
    body = {"name": "x", "delivery_mode": "email", "info": {"locale": "fr"}}
    first = requests.post(url, json=body, headers=AUTH, timeout=5)
    assert first.status_code == 429 and first.headers["Retry-After"] == "0"
    assert requests.post(url, json=body, headers=AUTH, timeout=5).status_code == 503
    rid = requests.post(url, json=body, headers=AUTH, timeout=5).json()["id"]
    requests.post(control, json={"reject_parse_anchors": True}, timeout=5)
    documents = f"{url}/{rid}/documents"
    files = {"file": ("a.pdf", PDF, "application/pdf")}
    assert requests.post(documents, files=files, data={"parse_anchors": "true"}, headers=AUTH,
                         timeout=5).status_code == 400
    assert requests.post(documents, files=files, data={"parse_anchors": "false"}, headers=AUTH,
                         timeout=5).status_code == 201
    as_json = {"file_name": "b.pdf", "file_content": base64.b64encode(PDF).decode()}
    assert requests.post(documents, json=as_json, headers=AUTH, timeout=5).status_code == 201
    assert requests.post(control, json={"no_such_fault": True}, timeout=5).status_code == 400
    requests.post(control, json={"unauthorized": True}, timeout=5)
    assert requests.get(f"{url}/{rid}", headers=AUTH, timeout=5).status_code == 401


def test_provider_rules_on_signers(simulator):
    url = f"{simulator.api_url}/signature_requests"
    rid = requests.post(url, json={"name": "x", "delivery_mode": "email", "ordered_signers": False},
                        headers=AUTH, timeout=5).json()["id"]
    document_id = requests.post(f"{url}/{rid}/documents", files={"file": ("a.pdf", PDF, "application/pdf")},
                                headers=AUTH, timeout=5).json()["id"]
    info = {"first_name": "A", "last_name": "B", "email": "a@example.com", "phone_number": "0612345678"}
    field = {"document_id": document_id, "type": "signature", "page": 1, "x": 1, "y": 2}
    cases = [
        ({"signature_level": "qualified_electronic_signature", "fields": [field]}, "ordered_signers"),
        ({"signature_authentication_mode": "otp_sms", "fields": [field]}, "E.164"),
        ({"fields": [{**field, "page": 2}]}, "page 1"),
    ]
    for extra, message in cases:
        answer = requests.post(f"{url}/{rid}/signers", json={"info": info, **extra}, headers=AUTH, timeout=5)
        assert answer.status_code == 400 and message in answer.json()["error"]
    assert requests.post(f"{url}/{rid}/activate", headers=AUTH, timeout=5).status_code == 400  # no signer yet


def test_runs_as_a_process(free_port):
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "ops.simulators.esign", "--port", str(port), "--secret", "s3cret-value",
         "--api-key", API_KEY], stdout=subprocess.PIPE, text=True)
    try:
        assert "e-signature simulator at" in process.stdout.readline()
        answer = requests.get(f"http://127.0.0.1:{port}/v3/signature_requests/nope", headers=AUTH, timeout=5)
        assert answer.status_code == 404
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert process.returncode == 0
