"""The operator simulator on its own: OAuth, flows progressing by delay or control, faults,
and as the process `vitrine dev` starts."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys

import requests

from ops.simulators.esign_store import minimal_pdf
from ops.simulators.odp_store import DEFAULT_SCOPE
from tests.einvoicing.conftest import CLIENT_ID, CLIENT_SECRET, wait_until


def token(operator, **form) -> requests.Response:
    body = {"grant_type": "client_credentials", "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
            "scope": DEFAULT_SCOPE, **form}
    return requests.post(operator.token_url, data=body, timeout=5)


def test_the_token_endpoint_checks_the_client_credentials(operator):
    good = token(operator)
    assert good.status_code == 200 and good.json()["token_type"] == "Bearer" and good.json()["expires_in"] == 3600
    assert token(operator, client_secret="wrong").status_code == 401
    assert token(operator, grant_type="password").status_code == 400
    basic = requests.post(operator.token_url, data={"grant_type": "client_credentials", "scope": DEFAULT_SCOPE},
                          auth=(CLIENT_ID, CLIENT_SECRET), timeout=5)
    assert basic.status_code == 200


def test_the_token_endpoint_checks_the_scope(operator):
    assert token(operator, scope="einvoicing:other").json() == {"error": "invalid_scope"}
    assert token(operator, scope="").status_code == 400
    operator.settings(scope="einvoicing:custom")
    assert token(operator).status_code == 400 and token(operator, scope="einvoicing:custom").status_code == 200


def test_api_calls_need_a_valid_token_and_a_flow_mode(operator):
    url = operator.url + "/public/einvoicing/v1/flows/search"
    access = token(operator).json()["access_token"]
    assert requests.post(url, json={}, headers={"X-FlowMode": "Sandbox"}, timeout=5).status_code == 401
    assert requests.post(url, json={}, headers={"Authorization": "Bearer forged", "X-FlowMode": "Sandbox"},
                         timeout=5).status_code == 401
    assert requests.post(url, json={}, headers={"Authorization": f"Bearer {access}"}, timeout=5).status_code == 400
    ok = requests.post(url, json={"where": {}, "limit": 10, "offset": 0},
                       headers={"Authorization": f"Bearer {access}", "X-FlowMode": "Sandbox"}, timeout=5)
    assert ok.status_code == 200 and ok.json() == {"results": [], "total": 0, "limit": 10, "offset": 0}


def test_lifecycle_statuses_are_scripted_per_flow_and_move_updated_at(operator, operator_client):
    flow = operator_client.submit_flow(tracking_id="FAC-2", name="FAC-2.pdf", content=minimal_pdf("2"))
    before = operator.flows("FAC-2")[0]["updatedAt"]
    answer = operator.control(f"flows/{flow.flow_id}/lifecycle", {"code": 210, "reason": "Montant contesté"})
    assert answer["lifecycle"][0]["code"] == 210 and answer["lifecycle"][0]["label"] == "Refusée"
    assert answer["lifecycle"][0]["reason"] == "Montant contesté" and answer["updatedAt"] > before
    assert operator_client.changed_flows(updated_after=before).flows[0].lifecycle[0].code == 210
    assert operator_client.changed_flows(updated_after=answer["updatedAt"]).flows == []
    for bad in ({"code": 299}, {"code": "210"}, {"code": 210, "reason": 3}):
        response = requests.post(f"{operator.url}/_control/flows/{flow.flow_id}/lifecycle", json=bad, timeout=5)
        assert response.status_code == 400


def test_the_directory_knows_every_siren_but_those_marked_unregistered(operator, operator_client):
    assert operator_client.recipient_registered("552100554")
    operator.control("directory", {"siren": "552100554", "registered": False})
    assert not operator_client.recipient_registered("552100554")
    assert operator.calls()["directory"] == 2


def test_a_flow_turns_ok_after_the_configured_delay(operator, operator_client):
    operator.settings(auto_ok_after_seconds=0)
    flow = operator_client.submit_flow(tracking_id="FAC-1", name="FAC-1.pdf", content=minimal_pdf("1"))
    assert operator_client.get_flow(flow.flow_id).status == "Ok"


def test_faults_are_validated_and_reset(operator):
    response = requests.post(operator.url + "/_control/faults", json={"explode": True}, timeout=5)
    assert response.status_code == 400
    response = requests.post(operator.url + "/_control/faults", json={"rate_limited_calls": "3"}, timeout=5)
    assert response.status_code == 400
    assert operator.faults(unauthorized=True)["faults"]["unauthorized"] is True
    operator.control("reset")
    assert operator.control("faults")["faults"]["unauthorized"] is False


def test_an_unknown_flow_cannot_be_controlled(operator):
    response = requests.post(operator.url + "/_control/flows/nope/ok", json={}, timeout=5)
    assert response.status_code == 404


def test_the_simulator_runs_as_a_process(free_port):
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "ops.simulators.odp", "--port", str(port), "--client-id", CLIENT_ID,
         "--client-secret", CLIENT_SECRET], stdout=subprocess.DEVNULL)
    try:
        def answers():
            try:
                return requests.post(f"http://127.0.0.1:{port}/oauth/token", timeout=1, data={
                    "grant_type": "client_credentials", "client_id": CLIENT_ID,
                    "client_secret": CLIENT_SECRET, "scope": DEFAULT_SCOPE}).status_code == 200
            except requests.ConnectionError:
                return False

        wait_until(answers)
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_supervised_simulator_stops_when_its_supervisor_dies(free_port):
    """`vitrine dev` killed (SIGKILL, no chance to stop its children): its simulator does not stay
    behind holding the port."""
    port = free_port()
    simulator = [sys.executable, "-m", "ops.simulators.odp", "--port", str(port), "--client-id", CLIENT_ID,
                 "--client-secret", CLIENT_SECRET]
    supervisor = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, sys, time\n"
         f"child = subprocess.Popen({simulator!r}, stdout=subprocess.DEVNULL)\n"
         "print(child.pid, flush=True)\ntime.sleep(600)\n"],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "VITRINE_SUPERVISOR": "dev"})
    child = int(supervisor.stdout.readline())
    try:
        def answers() -> bool:
            try:
                return requests.get(f"http://127.0.0.1:{port}/nope", timeout=1).status_code == 404
            except requests.ConnectionError:
                return False

        wait_until(answers)
        supervisor.kill()
        supervisor.wait(timeout=10)
        wait_until(lambda: not answers(), timeout=15)
    finally:
        supervisor.kill()
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)
