"""E-invoicing fixtures: the operator simulator over HTTP on a free port, and a client pointed at
it whose retry waits are recorded instead of slept and whose clock a test can move."""

from __future__ import annotations

import time

import pytest
import requests

from backend.einvoicing.operator_client import OdpClient
from ops.simulators.odp import OdpSimulator

CLIENT_ID = "vitrine-test-client"
CLIENT_SECRET = "odp_secret_test_9f8e7d6c5b4a"
ENTITY_ID = "ent-552100554"


def wait_until(predicate, timeout: float = 15.0, interval: float = 0.02):
    """Poll `predicate` until it returns a truthy value (bounded); fail with a clear message."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout} s")


class FakeClock:
    """A monotonic clock a test moves by hand (the token cache reads it)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Operator:
    """The simulator and helpers to drive it through its control routes, as a test would by hand."""

    def __init__(self, simulator: OdpSimulator) -> None:
        self.simulator = simulator
        self.url = simulator.url
        self.token_url = simulator.token_url

    def control(self, path: str, body: dict | None = None) -> dict:
        response = requests.post(f"{self.url}/_control/{path}", json=body or {}, timeout=5)
        response.raise_for_status()
        return response.json()

    def faults(self, **values) -> dict:
        return self.control("faults", values)

    def settings(self, **values) -> dict:
        return self.control("settings", values)

    def act(self, flow_id: str, action: str, message: str | None = None, code: str | None = None) -> dict:
        body = {key: value for key, value in (("message", message), ("code", code)) if value}
        return self.control(f"flows/{flow_id}/{action}", body)

    def flows(self, tracking_id: str | None = None, flow_type: str | None = None) -> list[dict]:
        params = {key: value for key, value in (("trackingId", tracking_id), ("flowType", flow_type)) if value}
        return requests.get(f"{self.url}/_control/flows", params=params, timeout=5).json()["flows"]

    def calls(self) -> dict:
        return requests.get(f"{self.url}/_control/state", timeout=5).json()["calls"]


@pytest.fixture
def operator():
    with OdpSimulator(client_id=CLIENT_ID, client_secret=CLIENT_SECRET, entity_id=ENTITY_ID) as simulator:
        yield Operator(simulator)


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def waits():
    """The retry waits the client asked for (seconds), in order."""
    return []


@pytest.fixture
def make_operator_client(operator, clock, waits):
    def build(**overrides) -> OdpClient:
        values = dict(base_url=operator.url, token_url=operator.token_url, client_id=CLIENT_ID,
                      client_secret=CLIENT_SECRET, entity_id=ENTITY_ID, flow_mode="Sandbox",
                      read_timeout=2.0, sleep=waits.append, monotonic=clock)
        values.update(overrides)
        return OdpClient(**values)

    return build


@pytest.fixture
def operator_client(make_operator_client):
    return make_operator_client()


@pytest.fixture
def storage():
    from backend.runtime import current_runtime

    return current_runtime().storage


@pytest.fixture
def issue(storage):
    """A stored PDF and its transmission draft, as the post-invoice hook makes them."""
    import uuid

    from backend.einvoicing.drafts import create_transmission_draft
    from backend.einvoicing.lifecycle import INVOICE_PDF_CONTEXT
    from ops.simulators.esign_store import minimal_pdf

    def make(*, with_pdf: bool = True, document_kind: str = "invoice", invoice_kind: str = "platform_sale",
             amount_incl_tax_cents: int = 12_000, invoice_number: str | None = None):
        number = invoice_number or f"FAC-RES-2026-{uuid.uuid4().hex[:8]}"
        key = f"billing/invoices/{number}.pdf"
        if with_pdf:
            storage.put_bytes(INVOICE_PDF_CONTEXT, key, minimal_pdf(number), "application/pdf")
        transmission, _ = create_transmission_draft(
            invoice_number=number, document_kind=document_kind, flow_type="fr_domestic_b2b",
            document_pdf_key=key if with_pdf else None, amount_incl_tax_cents=amount_incl_tax_cents,
            invoice_kind=invoice_kind)
        return transmission

    return make
