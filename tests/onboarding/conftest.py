"""Onboarding fixtures: the e-signature simulator over HTTP, a client pointed at it, the API served
on a real socket (so the simulator's webhooks reach it), and webhook signing helpers."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
import uuid
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest

from backend.documents.seeding import seed_default_versions
from backend.identity.models import BillingProfile
from backend.onboarding.esign_client import EsignClient
from backend.onboarding.provider import SignerInfo
from backend.runtime import boot, current_runtime
from ops.simulators.esign import EsignSimulator
from ops.simulators.esign_store import minimal_pdf
from tests.conftest import TEST_WEBHOOK_SECRET
from tests.factories import add_member, make_organization, make_user, siret_for

API_KEY = "esk_test_key_5b1d9c0e7a"
FAST_BACKOFF = (0.05,) * 8  # the simulator's webhook retries, shortened


def wait_until(predicate, timeout: float = 10.0, interval: float = 0.02):
    """Poll `predicate` until it returns a truthy value (bounded); fail with a clear message."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout} s")


def signed_headers(body: bytes, *, secret: str = TEST_WEBHOOK_SECRET, issued_at: int | None = None,
                   retry: int | None = None) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "X-Esign-Signature-256": "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest(),
        "X-Esign-Issued-At": str(int(time.time()) if issued_at is None else issued_at),
    }
    if retry is not None:
        headers["X-Esign-Retry"] = str(retry)
    return headers


def event_body(name: str, provider_id: str | None, *, event_id: str | None = None, event_time: int | None = None,
               status: str = "ongoing") -> bytes:
    event = {
        "event_id": event_id or str(uuid.uuid4()),
        "event_name": name,
        "event_time": str(int(time.time()) if event_time is None else event_time),
        "sandbox": True,
        "data": {"signature_request": {"id": provider_id, "status": status, "external_id": None}},
    }
    return json.dumps(event).encode()


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args) -> None:
        pass


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    request_queue_size = 64  # the default backlog (5) resets bursts of concurrent deliveries


@pytest.fixture
def api_server(app):
    """The app on 127.0.0.1 over real HTTP; yields its base URL."""
    server = make_server("127.0.0.1", 0, app, server_class=_ThreadingWSGIServer, handler_class=_QuietHandler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def make_simulator():
    started: list[EsignSimulator] = []

    def start(callback_url: str | None = None, **kwargs) -> EsignSimulator:
        kwargs.setdefault("backoff", FAST_BACKOFF)
        simulator = EsignSimulator(callback_url=callback_url, secret=TEST_WEBHOOK_SECRET, api_key=API_KEY, **kwargs)
        started.append(simulator.start())
        return simulator

    yield start
    for simulator in started:
        simulator.stop()


@pytest.fixture
def simulator(make_simulator):
    return make_simulator()


def fast_client(base_url: str, api_key: str | None = API_KEY) -> EsignClient:
    return EsignClient(base_url, api_key, attempts=4, backoff_seconds=0.01, max_backoff_seconds=0.05,
                       read_timeout=5.0)


@pytest.fixture
def provider(simulator):
    """A real client on the simulator (retries shortened), handed to services as an argument; a
    test that also uses `app` gets an app booted with it (see `app`)."""
    return fast_client(simulator.api_url)


@pytest.fixture
def app(make_app, request):
    """The app; booted with the simulator-backed `provider` when the test uses it, the way a
    process hands the clients it builds at boot to the web and to the actors."""
    if "provider" in request.fixturenames:
        return make_app(esign=request.getfixturevalue("provider"))
    return make_app()


def hand_to_worker(**clients):
    """Boot the worker's runtime with `clients` (what `dramatiq actors` builds at boot), for a test
    whose simulator starts after its app; returns the function that restores the previous one."""
    previous = current_runtime()
    boot(previous.config, role="worker", **clients)
    return lambda: boot(previous.config, role="worker", **previous.clients())


def live_request(provider) -> str:
    """An activated request at the simulator; returns its provider id."""
    pid = prepared_request(provider)
    provider.activate(pid)
    return pid


def prepared_request(provider) -> str:
    """A request at the simulator with a document and a signer, not yet activated."""
    pid = provider.create_request(name="Onboarding", external_id="x", delivery_mode="none", ordered_signers=True,
                                  locale="fr")
    document_id = provider.upload_document(pid, filename="c.pdf", content=minimal_pdf("c"))
    provider.add_signer(pid, signer=SignerInfo("Ada", "Martin", "ada@example.com", None),
                        signature_level="qualified_electronic_signature", authentication_mode=None,
                        document_ids=[document_id])
    return pid


@pytest.fixture
def runtime():
    runtime = current_runtime()
    seed_default_versions(runtime.storage)
    return runtime


def register_company(simulator, organization, *, representatives=(("Camille", "Martin", "Président de SAS"),),
                     state: str = "active", postal_code: str = "74000") -> None:
    """Make the registry simulator know `organization` with these representatives."""
    simulator.add_company({
        "siren": organization.siren, "legalName": organization.legal_name, "state": state,
        "address": {"street": "12 rue des Lilas", "postalCode": postal_code, "city": "Annecy"},
        "representatives": [{"firstName": f, "lastName": last, "role": role} for f, last, role in representatives]})


@pytest.fixture
def onboarding_org(registry_sim):
    """An organization (industrial by default) with a manager and a complete billing profile, known
    to the registry simulator: its signer Camille Martin is a listed representative when
    `on_registry`, else another person is."""

    def make(*, on_registry: bool = True, phone: str = "+33612345678", actor_type: str = "industrial"):
        organization = make_organization(actor_type)
        register_company(registry_sim, organization, representatives=[
            ("Camille", "Martin", "Président de SAS") if on_registry else ("Dominique", "Durand", "Gérant")])
        manager = make_user()
        add_member(manager, organization, "manager")
        BillingProfile.create(
            organization=organization.id, legal_name=organization.legal_name, siret=siret_for(organization.siren),
            street="12 rue des Lilas", postal_code="74000", city="Annecy", country="FR",
            iban="FR7630006000011234567890189", signer_first_name="Camille", signer_last_name="Martin",
            signer_email="camille.martin@example.com", signer_phone=phone,
            signer_on_registry_extract=on_registry)
        return organization, manager

    return make
