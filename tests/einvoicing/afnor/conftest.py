"""AFNOR fixtures: one platform simulator per module (reset before each test), a client pointed at
it whose retry waits are recorded instead of slept, and whose every request and every answer is
validated against our description of XP Z12-013 annexes A and B (`contract`)."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests
from openapi_core import OpenAPI
from openapi_core.contrib.requests import RequestsOpenAPIRequest, RequestsOpenAPIResponse

import backend.einvoicing
from backend.einvoicing.afnor_client import AfnorClient
from ops.simulators.afnor import AfnorSimulator
from ops.simulators.odp_store import Settings
from tests.einvoicing.conftest import Operator

CLIENT_ID = "vitrine-afnor-test"
CLIENT_SECRET = "afnor_secret_test_1a2b3c4d"
SCOPE = "afnor:platform"
DESCRIPTIONS = Path(backend.einvoicing.__file__).parent / "afnor_openapi"


def description(name: str, server: str) -> OpenAPI:
    """Our OpenAPI description `name`, served at `server`."""
    spec = json.loads((DESCRIPTIONS / f"{name}.json").read_text())
    spec["servers"] = [{"url": server}]
    return OpenAPI.from_dict(spec)


class Contract:
    """A `requests` response hook: every call to the Flow or Directory Service (not the token
    endpoint, which the standard leaves to the PA) is validated, request and answer, against our
    description; a violation raises out of the client's call. `calls` lists what was validated."""

    def __init__(self, simulator: AfnorSimulator) -> None:
        self.apis = [(simulator.flow_url, description("flow-service", simulator.flow_url)),
                     (simulator.directory_url, description("directory-service", simulator.directory_url))]
        self.calls: list[tuple[str, str, int, dict]] = []

    def __call__(self, response: requests.Response, *args, **kwargs) -> requests.Response:
        url = response.request.url or ""
        for base, api in self.apis:
            if url.startswith(base + "/"):
                request = RequestsOpenAPIRequest(response.request)
                api.validate_request(request)
                api.validate_response(request, RequestsOpenAPIResponse(response))
                self.calls.append((response.request.method or "", urlsplit(url).path[len(urlsplit(base).path):],
                                   response.status_code, dict(response.request.headers)))
        return response

    def operations(self) -> set[tuple[str, str, int]]:
        return {(method, path.split("/code:")[0] if "/code:" in path else path, status)
                for method, path, status, _ in self.calls}


class Platform(Operator):
    """The simulator and its control routes, as a test drives them by hand (the operator
    simulator's, and the incoming lifecycle flows of a platform)."""

    def lifecycle(self, flow_id: str, code: int, reason: str | None = None, reason_code: str | None = None) -> dict:
        body = {key: value for key, value in (("code", code), ("reason", reason), ("reasonCode", reason_code))
                if value is not None}
        return self.control(f"flows/{flow_id}/lifecycle", body)

    def subscribe(self, url: str | None, secret: str | None = None) -> dict:
        """The callback subscription: callbacks to `<url>/api/webhooks/afnor` signed with `secret`."""
        return self.control("callbacks", {"url": url, "secret": secret})

    def deliveries(self) -> list[dict]:
        """The callbacks delivered so far: url, body, headers and the status they were answered."""
        return requests.get(f"{self.url}/_control/state", timeout=5).json()["deliveries"]


@pytest.fixture(scope="module")
def afnor_simulator():
    with AfnorSimulator(client_id=CLIENT_ID, client_secret=CLIENT_SECRET, settings=Settings(scope=SCOPE)) as simulator:
        yield simulator


@pytest.fixture
def platform(afnor_simulator):
    simulator = Platform(afnor_simulator)
    simulator.control("reset")
    simulator.settings(auto_ok_after_seconds=None, reject_duplicates=False, scope=SCOPE)
    return simulator


@pytest.fixture
def contract(afnor_simulator):
    return Contract(afnor_simulator)


@pytest.fixture
def make_afnor_client(platform, contract, clock, waits):
    sessions: list[requests.Session] = []

    def build(**overrides) -> AfnorClient:
        session = requests.Session()
        sessions.append(session)
        session.hooks["response"].append(contract)
        values = dict(flow_url=platform.simulator.flow_url, directory_url=platform.simulator.directory_url,
                      token_url=platform.simulator.token_url, client_id=CLIENT_ID, client_secret=CLIENT_SECRET,
                      scope=SCOPE, read_timeout=2.0, registration_wait=0.0, sleep=waits.append, monotonic=clock,
                      session=session)
        values.update(overrides)
        return AfnorClient(**values)

    yield build
    for session in sessions:
        session.close()


@pytest.fixture
def afnor_client(make_afnor_client):
    return make_afnor_client()
