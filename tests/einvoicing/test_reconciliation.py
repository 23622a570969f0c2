"""Reconciliation: counts, scope, and the alert levels on both sides of every threshold (spec C)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from backend import clock
from backend.db import database
from backend.einvoicing import reconciliation
from backend.einvoicing.drafts import create_transmission_draft
from backend.einvoicing.models import Transmission
from backend.einvoicing.reconciliation import (
    DISCREPANCY_RATE_PERCENT,
    MISSING_TRANSMISSION_BACKLOG,
    PROVIDER_FAILED_BACKLOG,
    backlog_level,
    rate_level,
)

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("threshold", "cases"),
    [
        (PROVIDER_FAILED_BACKLOG, [(0, "ok"), (4, "ok"), (5, "warning"), (19, "warning"), (20, "critical")]),
        (MISSING_TRANSMISSION_BACKLOG, [(9, "ok"), (10, "warning"), (29, "warning"), (30, "critical"),
                                        (31, "critical")]),
    ],
)
def test_backlog_levels_at_their_exact_thresholds(threshold, cases):
    assert [backlog_level(value, threshold) for value, _ in cases] == [level for _, level in cases]


@pytest.mark.parametrize(
    ("numerator", "denominator", "level"),
    [(0, 0, "ok"), (0, 100, "ok"), (4, 100, "ok"), (499, 10_000, "ok"), (5, 100, "warning"), (1, 20, "warning"),
     (1499, 10_000, "warning"), (14, 100, "warning"), (15, 100, "critical"), (3, 20, "critical"), (1, 1, "critical")],
)
def test_discrepancy_rate_levels_at_5_and_15_percent_exactly(numerator, denominator, level):
    assert rate_level(numerator, denominator, DISCREPANCY_RATE_PERCENT) == level


# The invoices are faked with a temporary table: only the owner may create one.
pytestmark = pytest.mark.owner


@pytest.fixture
def invoices():
    """The invoices reconciliation reads (billing's table, shadowed by a temporary table of the
    columns e-invoicing reads, so the test does not depend on billing's other columns)."""
    database.execute_sql(
        "CREATE TEMP TABLE billing_invoice (number varchar(80), kind varchar(40), issued_at timestamptz, "
        "status varchar(40) NOT NULL DEFAULT 'issued', customer jsonb) ON COMMIT DROP")

    def add(kind: str = "platform_sale", issued_at: datetime = NOW - timedelta(hours=1)) -> str:
        number = f"FAC-RES-2026-{uuid.uuid4().hex[:8]}"
        database.execute_sql("INSERT INTO billing_invoice (number, kind, issued_at) VALUES (%s, %s, %s)",
                             (number, kind, issued_at))
        return number

    return add


def transmit(number: str, status: str = "pending_dispatch", kind: str = "platform_sale") -> None:
    document = "credit_note" if kind.endswith("credit_note") else "invoice"
    transmission, _ = create_transmission_draft(invoice_number=number, document_kind=document,
                                                flow_type="fr_domestic_b2b", document_pdf_key="k",
                                                amount_incl_tax_cents=100, invoice_kind=kind)
    if status == "failed":
        Transmission.update(status="dispatching").where(Transmission.id == transmission.id).execute()
        Transmission.update(status="failed", last_error_message="x").where(Transmission.id == transmission.id).execute()


def snapshot(config, **overrides):
    with clock.frozen_at(NOW):
        return reconciliation.snapshot(replace(config, **overrides) if overrides else config)


def alert(data: dict, name: str) -> dict:
    return next(a for a in data["alerts"] if a["name"] == name)


def test_counts_missing_transmissions_after_15_minutes_only(config, invoices):
    late = invoices(issued_at=NOW - timedelta(minutes=15))
    invoices(issued_at=NOW - timedelta(minutes=14, seconds=59))  # too recent to be missing
    transmitted = invoices()
    transmit(transmitted)
    e_reported = invoices()
    create_transmission_draft(invoice_number=e_reported, document_kind="invoice", flow_type="eu_intra_b2b",
                              document_pdf_key="k", amount_incl_tax_cents=100, invoice_kind="platform_sale")
    invoices(kind="store_deposit")  # legacy: out of scope
    data = snapshot(config)
    assert data["invoicesInScope"] == 4 and data["missingTransmission"] == 1
    assert data["transmissionsByStatus"]["pending_dispatch"] == 1 and set(data["transmissionsByStatus"]) == {
        "pending_dispatch", "dispatching", "sent", "acknowledged", "rejected", "failed", "cancelled"}
    assert data["eReportingByStatus"]["pending_dispatch"] == 1  # counted apart
    assert late  # the one counted


def test_self_billed_kinds_only_when_enabled(config, invoices):
    invoices(kind="supplier_self_billed")
    transmit(invoices(kind="supplier_credit_note"), status="failed", kind="supplier_credit_note")
    off = snapshot(config, einvoicing_self_billing_enabled=False)
    assert (off["invoicesInScope"], off["providerFailed"]) == (0, 0)
    on = snapshot(config, einvoicing_self_billing_enabled=True)
    assert (on["invoicesInScope"], on["missingTransmission"], on["providerFailed"]) == (2, 1, 1)
    assert on["scope"]["invoiceKinds"][-2:] == ["supplier_self_billed", "supplier_credit_note"]


def test_provider_failed_backlog_both_sides_of_5(config, invoices):
    numbers = [invoices() for _ in range(100)]
    for number in numbers[:4]:
        transmit(number, status="failed")
    for number in numbers[4:]:
        transmit(number)
    data = snapshot(config)
    assert (alert(data, "provider_failed_backlog")["level"], alert(data, "discrepancy_rate")["level"]) == ("ok", "ok")
    assert data["discrepancyRateBps"] == 400
    Transmission.update(status="dispatching").where(Transmission.invoice_number == numbers[4]).execute()
    Transmission.update(status="failed").where(Transmission.invoice_number == numbers[4]).execute()
    data = snapshot(config)
    assert alert(data, "provider_failed_backlog") == {"name": "provider_failed_backlog", "value": 5,
                                                      "level": "warning", "warningAt": 5, "criticalAt": 20}
    assert (alert(data, "discrepancy_rate")["level"], data["discrepancyRateBps"]) == ("warning", 500)


def test_missing_backlog_both_sides_of_30_and_a_critical_rate(config, invoices):
    for _ in range(29):
        invoices()
    data = snapshot(config)
    assert alert(data, "missing_transmission_backlog")["level"] == "warning"
    assert alert(data, "discrepancy_rate")["level"] == "critical" and data["discrepancyRateBps"] == 10_000
    invoices()
    assert alert(snapshot(config), "missing_transmission_backlog")["level"] == "critical"


def test_polling_state_in_the_snapshot(config):
    data = snapshot(config, einvoicing_polling_enabled=True)
    assert data["polling"]["enabled"] is True and data["polling"]["inactive"] is True
    assert snapshot(config)["polling"]["inactive"] is False  # disabled: not "inactive"


def test_the_snapshot_route(make_app, invoices):
    import falcon.testing

    from tests.factories import make_admin, signed_in

    invoices()
    client = falcon.testing.TestClient(make_app())
    answer = client.simulate_get("/api/admin/einvoicing/reconciliation", headers=signed_in(make_admin()))
    assert answer.status_code == 200
    assert {a["name"] for a in answer.json["data"]["alerts"]} == {
        "discrepancy_rate", "provider_failed_backlog", "missing_transmission_backlog", "refused_backlog"}


def fail(number: str, **fields) -> None:
    Transmission.update(status="dispatching").where(Transmission.invoice_number == number).execute()
    Transmission.update(status="failed", **fields).where(Transmission.invoice_number == number).execute()


def test_provider_failed_counts_what_needs_action_not_history(config, invoices):
    """A failure retried automatically, an unknown recipient (counted apart) and a rejection whose
    invoice is credited in full (corrected by a credit note) need no admin: not in the backlog."""
    numbers = [invoices() for _ in range(5)]
    for number in numbers:
        transmit(number)
    fail(numbers[0])  # needs an admin
    fail(numbers[1], next_dispatch_at=NOW + timedelta(minutes=1))  # retried automatically
    fail(numbers[2], last_error_code="EINVOICE_RECIPIENT_UNKNOWN")
    for number in numbers[3:]:  # an old rejection, then corrected
        Transmission.update(status="dispatching").where(Transmission.invoice_number == number).execute()
        Transmission.update(status="sent", provider_status="processing", provider_flow_id=f"f-{number}").where(
            Transmission.invoice_number == number).execute()
        Transmission.update(status="rejected", provider_status="rejected").where(
            Transmission.invoice_number == number).execute()
    database.execute_sql("UPDATE billing_invoice SET status = 'credited' WHERE number = %s", (numbers[4],))
    data = snapshot(config)
    assert (data["providerFailed"], data["recipientUnknown"]) == (2, 1)
    assert data["transmissionsByStatus"]["failed"] == 3 and data["transmissionsByStatus"]["rejected"] == 2


def test_refused_backlog_warning_at_1_and_critical_at_5_until_credited(config, invoices):
    numbers = [invoices() for _ in range(5)]
    for number in numbers:
        transmit(number)
        transmission = Transmission.get(Transmission.invoice_number == number)
        database.execute_sql("INSERT INTO einvoice_lifecycle_event (transmission_id, code, at) VALUES (%s, %s, %s)",
                             (transmission.id, 210, NOW))
        if number == numbers[0]:
            assert alert(snapshot(config), "refused_backlog")["level"] == "warning"
    assert alert(snapshot(config), "refused_backlog") == {"name": "refused_backlog", "value": 5, "level": "critical",
                                                          "warningAt": 1, "criticalAt": 5}
    database.execute_sql("UPDATE billing_invoice SET status = 'credited' WHERE number = %s", (numbers[0],))
    assert snapshot(config)["refusedBacklog"] == 4
