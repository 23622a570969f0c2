"""The operator client against the simulator over HTTP: OAuth token cache, multipart with a
string `flowInfo`, retries on 429/503 (waits recorded, not slept), search before posting again."""

from __future__ import annotations

import hashlib
import json
import threading
import time
import uuid

import pytest
import requests

from backend.einvoicing.operator_choice import build_operator_client
from backend.einvoicing.operator_client import (
    OperatorCredentialsInvalid,
    OperatorError,
    OperatorNotConfigured,
    OperatorRejected,
    OperatorUnavailable,
    StubOperatorClient,
)
from ops.simulators.esign_store import minimal_pdf
from tests.einvoicing.conftest import CLIENT_SECRET, ENTITY_ID, wait_until


def tracking() -> str:
    return f"FAC-RES-2026-{uuid.uuid4().hex[:6]}"


def submit(client, tracking_id: str | None = None):
    tracking_id = tracking_id or tracking()
    return client.submit_flow(tracking_id=tracking_id, name=f"{tracking_id}.pdf", content=minimal_pdf(tracking_id))


def test_a_flow_is_submitted_then_found_by_flow_id_and_tracking_id(operator, operator_client):
    tracking_id = tracking()
    flow = submit(operator_client, tracking_id)
    assert flow.status == "Pending" and flow.tracking_id == tracking_id
    stored = operator.flows(tracking_id)
    assert len(stored) == 1 and stored[0]["flowMode"] == "Sandbox" and stored[0]["entityId"] == ENTITY_ID
    assert stored[0]["sha256"] == hashlib.sha256(minimal_pdf(tracking_id)).hexdigest()
    assert operator_client.get_flow(flow.flow_id).status == "Pending"
    operator.act(flow.flow_id, "ok")
    assert operator_client.find_by_tracking_id(tracking_id).status == "Ok"
    assert operator_client.find_by_tracking_id(tracking()) is None


def test_the_operator_error_message_is_read(operator, operator_client):
    flow = submit(operator_client)
    operator.act(flow.flow_id, "error", "SIRET du destinataire inconnu")
    found = operator_client.get_flow(flow.flow_id)
    assert found.status == "Error" and found.error_message == "SIRET du destinataire inconnu"


def test_the_simulator_refuses_flow_info_sent_as_a_file_part(operator, operator_client):
    """The client's own request passes (test above); the same body with `flowInfo` as a file part
    is refused: this proves the client sends a plain string field."""
    token = operator_client.tokens.get()
    pdf = minimal_pdf("x")
    info = json.dumps({"entityId": ENTITY_ID, "flowSyntax": "Factur-X", "trackingId": tracking(), "name": "x.pdf",
                       "sha256": hashlib.sha256(pdf).hexdigest()})
    headers = {"Authorization": f"Bearer {token}", "X-FlowMode": "Sandbox"}
    url = operator.url + "/public/einvoicing/v1/flows"
    as_file = requests.post(url, headers=headers, timeout=5, files={
        "file": ("x.pdf", pdf, "application/pdf"), "flowInfo": ("flowInfo.json", info, "application/json")})
    assert as_file.status_code == 400 and "flowInfo is required" in as_file.json()["error"]
    missing = requests.post(url, headers=headers, timeout=5, files={"file": ("x.pdf", pdf, "application/pdf")})
    assert missing.status_code == 400
    as_field = requests.post(url, headers=headers, timeout=5, data={"flowInfo": info},
                             files={"file": ("x.pdf", pdf, "application/pdf")})
    assert as_field.status_code == 201


def test_a_wrong_sha256_is_refused(operator, operator_client):
    token = operator_client.tokens.get()
    info = json.dumps({"entityId": ENTITY_ID, "flowSyntax": "Factur-X", "trackingId": "T", "name": "x.pdf",
                       "sha256": "0" * 64})
    response = requests.post(operator.url + "/public/einvoicing/v1/flows", timeout=5,
                             headers={"Authorization": f"Bearer {token}", "X-FlowMode": "Sandbox"},
                             data={"flowInfo": info}, files={"file": ("x.pdf", minimal_pdf("x"), "application/pdf")})
    assert response.status_code == 400 and "sha256" in response.json()["error"]


def test_every_call_carries_the_flow_mode(operator, make_operator_client):
    client = make_operator_client(flow_mode="Production")
    flow = submit(client)
    assert operator.flows(flow.tracking_id)[0]["flowMode"] == "Production"
    # A search in the other mode does not see it.
    assert make_operator_client(flow_mode="Sandbox").get_flow(flow.flow_id) is None


def test_one_token_call_for_twenty_submissions_and_a_new_one_after_expiry(operator, operator_client, clock):
    threads = [threading.Thread(target=submit, args=(operator_client,)) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert operator.calls() == {"token": 1, "submit": 20, "search": 0, "directory": 0}
    clock.advance(3600 - 61)  # the simulator's tokens live 3600 s: not yet within the margin
    submit(operator_client)
    assert operator.calls()["token"] == 1
    clock.advance(2)  # now less than 60 s before expiry: refreshed
    submit(operator_client)
    assert operator.calls()["token"] == 2


@pytest.mark.parametrize(("fault", "searches", "expected_waits"),
                         [("rate_limited_calls", 0, [1.0, 1.0]), ("unavailable_submits", 2, [0.5, 1.0])])
def test_429_and_503_are_retried_exactly_twice_waiting_500_ms_times_the_attempt(operator, operator_client, waits,
                                                                               fault, searches, expected_waits):
    """503: 0.5 s then 1 s; 429: the same, or the operator's Retry-After (1 s here) when longer."""
    operator.faults(**{fault: 3})
    with pytest.raises(OperatorUnavailable) as raised:
        submit(operator_client)
    assert raised.value.code == "EINVOICE_PROVIDER_FAILED"
    assert waits == expected_waits
    # Three posts; after a 503 (a 5xx: the outcome is unknown) a search comes before each new post.
    assert operator.calls() == {"token": 1, "submit": 3, "search": searches, "directory": 0}
    assert operator.flows() == []


def test_searches_are_retried_on_503_too(operator, operator_client, waits):
    flow = submit(operator_client)
    operator.faults(unavailable_calls=2)
    assert operator_client.get_flow(flow.flow_id).flow_id == flow.flow_id
    assert waits == [0.5, 1.0]


def test_when_the_search_after_an_unknown_outcome_fails_nothing_is_posted_again(operator, operator_client):
    """The answer of the accepted flow is lost, then every search answers 503: the client gives up
    rather than post a second time; the flow exists once at the operator."""
    operator.faults(lost_answers=1, unavailable_searches=3)
    tracking_id = tracking()
    with pytest.raises(OperatorUnavailable):
        submit(operator_client, tracking_id)
    assert operator.calls()["submit"] == 1 and len(operator.flows(tracking_id)) == 1


def test_a_503_then_success_searches_before_posting_again(operator, operator_client, waits):
    operator.faults(unavailable_submits=1)
    tracking_id = tracking()
    flow = submit(operator_client, tracking_id)
    assert waits == [0.5]
    assert operator.calls() == {"token": 1, "submit": 2, "search": 1, "directory": 0}
    assert [f["flowId"] for f in operator.flows(tracking_id)] == [flow.flow_id]


def test_a_429_then_success_posts_again_without_searching(operator, operator_client, waits):
    operator.faults(rate_limited_calls=2)
    submit(operator_client)
    assert waits == [1.0, 1.0]
    assert operator.calls() == {"token": 1, "submit": 3, "search": 0, "directory": 0}


def test_an_answer_lost_after_acceptance_is_found_by_tracking_id_and_not_posted_again(operator, operator_client):
    operator.faults(lost_answers=1)
    tracking_id = tracking()
    flow = submit(operator_client, tracking_id)
    flows = operator.flows(tracking_id)
    assert len(flows) == 1 and flows[0]["flowId"] == flow.flow_id
    assert operator.calls()["submit"] == 1 and operator.calls()["search"] == 1


SLOW_POST_SECONDS = 1.0


def settled(operator) -> bool:
    """The simulator is processing no request (a slow post has landed)."""
    return requests.get(f"{operator.url}/_control/state", timeout=5).json()["inFlight"] == 0


def test_a_slow_post_is_never_posted_twice(operator, make_operator_client):
    """The post outlives the read timeout and lands later: the client keeps searching until the
    operator has had the time to register it (its `registration_wait`), finds it and posts nothing
    more. Counted once the simulator has settled (the slow post landed), there is one flow."""
    client = make_operator_client(read_timeout=0.2, registration_wait=SLOW_POST_SECONDS + 1.0, sleep=time.sleep)
    operator.faults(slow_calls=1, slow_seconds=SLOW_POST_SECONDS)
    tracking_id = tracking()
    flow = submit(client, tracking_id)
    wait_until(lambda: settled(operator), timeout=SLOW_POST_SECONDS + 2.0)
    assert [f["flowId"] for f in operator.flows(tracking_id)] == [flow.flow_id]
    assert operator.calls()["submit"] == 1


def test_a_duplicate_answer_is_adopted_as_already_transmitted(operator, make_operator_client, waits):
    """The operator rejects a second post of a tracking id (409 with its flow): the client adopts
    the flow it holds; the transmission is not reported as failed."""
    operator.settings(reject_duplicates=True)
    tracking_id = tracking()
    first = submit(make_operator_client(), tracking_id)
    # A dispatch that lost track of the first one posts again: the 409 names the flow to adopt.
    again = submit(make_operator_client(), tracking_id)
    assert again.flow_id == first.flow_id and len(operator.flows(tracking_id)) == 1


def test_a_foreign_search_result_is_never_adopted(operator, operator_client):
    """An operator that ignores the search's filters answers another invoice's flow: the client
    adopts nothing, and posts its own."""
    other = submit(operator_client)
    operator.faults(search_ignores_filters=True)
    assert operator_client.find_by_tracking_id(tracking()) is None
    operator.faults(lost_answers=1)
    tracking_id = tracking()
    mine = submit(operator_client, tracking_id)
    assert mine.flow_id != other.flow_id and mine.tracking_id == tracking_id


def test_odp_scope_is_the_scope_asked(operator, make_operator_client):
    operator.settings(scope="einvoicing:vitrine")
    with pytest.raises(OperatorCredentialsInvalid):
        submit(make_operator_client())
    assert submit(make_operator_client(scope="einvoicing:vitrine")).flow_id


def test_the_scope_comes_from_odp_scope(config):
    from dataclasses import replace

    from backend.einvoicing.operator_client import OdpClient

    assert OdpClient.from_config(replace(config, odp_scope="einvoicing:vitrine")).scope == "einvoicing:vitrine"


def test_a_long_retry_after_gives_up_at_once_and_says_when(operator, operator_client, waits):
    operator.settings(retry_after_seconds=120)
    operator.faults(rate_limited_calls=1)
    with pytest.raises(OperatorUnavailable) as raised:
        submit(operator_client)
    assert raised.value.retry_after == 120 and waits == [] and operator.calls()["submit"] == 1


def test_a_redirect_is_never_followed(operator, make_operator_client):
    """The token request carries the secret: a redirect answered there is an error, not followed."""
    import http.server
    import threading

    class Redirect(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.send_response(307)
            self.send_header("Location", operator.token_url)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        client = make_operator_client(token_url=f"http://127.0.0.1:{server.server_port}/oauth/token")
        with pytest.raises(OperatorError) as raised:
            submit(client)
        assert raised.value.status == 307 and operator.calls()["token"] == 0
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(("fault", "status"), [("unauthorized", 401), ("forbidden", 403)])
def test_401_and_403_give_provider_failed_without_retry(operator, operator_client, waits, fault, status):
    operator.faults(**{fault: True})
    with pytest.raises(OperatorCredentialsInvalid) as raised:
        submit(operator_client)
    assert raised.value.status == status and raised.value.code == "EINVOICE_PROVIDER_FAILED"
    assert waits == []


def test_a_401_drops_the_cached_token(operator, operator_client):
    submit(operator_client)
    operator.faults(unauthorized=True)
    with pytest.raises(OperatorCredentialsInvalid):
        submit(operator_client)
    operator.faults(unauthorized=False)
    submit(operator_client)
    assert operator.calls()["token"] == 2


def test_wrong_client_credentials_are_refused_at_the_token_endpoint(operator, make_operator_client):
    client = make_operator_client(client_secret="not-the-secret")
    with pytest.raises(OperatorCredentialsInvalid) as raised:
        submit(client)
    assert raised.value.status == 401
    assert operator.calls() == {"token": 1, "submit": 0, "search": 0, "directory": 0}


@pytest.mark.parametrize("missing", ["client_id", "client_secret", "entity_id"])
def test_missing_identity_refuses_the_call_without_network(operator, make_operator_client, missing):
    client = make_operator_client(**{missing: None})
    with pytest.raises(OperatorNotConfigured) as raised:
        submit(client)
    assert missing.upper() in raised.value.message.replace("CLIENT_", "CLIENT_")
    assert operator.calls() == {"token": 0, "submit": 0, "search": 0, "directory": 0}


def test_an_entity_of_another_client_is_refused(operator, make_operator_client):
    with pytest.raises(OperatorCredentialsInvalid):
        submit(make_operator_client(entity_id="ent-other"))


def test_the_operator_refusing_the_document_is_a_rejection(operator, operator_client):
    with pytest.raises(OperatorRejected) as raised:
        operator_client.submit_flow(tracking_id="T", name="x.pdf", content=b"not a pdf")
    assert raised.value.status == 400


def test_the_secret_and_the_token_are_never_logged(operator, operator_client, log_lines):
    operator.faults(unavailable_submits=1)
    submit(operator_client)
    operator.faults(unauthorized=True)
    with pytest.raises(OperatorCredentialsInvalid):
        submit(operator_client)
    text = log_lines.raw()
    assert "operator call" in text
    token = operator_client.tokens._token or ""
    assert CLIENT_SECRET not in text and "odp_at_" not in text and (not token or token not in text)
    assert CLIENT_SECRET not in repr(operator_client)


def test_test_mode_builds_a_stub_without_network(config):
    from dataclasses import replace

    client = build_operator_client(replace(config, e2e_test_mode=True))
    assert isinstance(client, StubOperatorClient)
    flow = client.submit_flow(tracking_id="FAC-1", name="FAC-1.pdf", content=b"")
    assert flow.status == "Ok" and client.get_flow(flow.flow_id).status == "Ok"
    assert client.find_by_tracking_id("FAC-1").flow_id == flow.flow_id


def test_e2e_test_mode_is_refused_in_production():
    """The stub marks every invoice acknowledged without sending it: boot stops in production."""
    from backend.config import ConfigError, load_config

    with pytest.raises(ConfigError, match="E2E_TEST_MODE"):
        load_config({"E2E_TEST_MODE": "1", "ENVIRONMENT": "production"})
    assert load_config({"E2E_TEST_MODE": "1", "ENVIRONMENT": "staging"}).e2e_test_mode is True
