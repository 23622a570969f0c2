"""Self-billing: the scheduler's counters on a prepared mix of reservations (a unit failing in the
database counted and the pass going on), interval handling, the issued invoice (distributor's
series, journal, financial status, post-invoice hook through the outbox, a Factur-X PDF of type
389 "Autofacturation"), the manual catch-up's gates and `force`, and the self-billed credit note's
reversing journal."""

from __future__ import annotations

from datetime import timedelta

import pytest

from backend import clock
from backend.billing import corrections, store_share
from backend.billing.accounting import ledger
from backend.billing.accounting.chart import Account
from backend.billing.collection import collect
from backend.billing.documents.stored_pdf import STORAGE_CONTEXT
from backend.billing.invoicing.invoices import credited_cents
from backend.billing.invoicing.post_invoice_hook import run_post_invoice_hook
from backend.billing.models import (
    AuditEntry,
    FinancialRecord,
    IncidentStatus,
    Invoice,
    PaymentMethod,
    ReservationIncident,
)
from backend.billing.self_billing import invoice as self_billing
from backend.billing.self_billing import scheduler
from backend.db import database
from backend.errors import Conflict
from backend.outbox import OutboxMessage
from tests.billing.accounting.books import book_lines, book_totals
from tests.billing.documents.facturx_check import check_pdf
from tests.billing.helpers import Market, approved_org, booted_config
from tests.billing.invoicing.test_post_invoice_hook import platform_config  # noqa: F401 (fixtures)
from tests.billing.self_billing.data import AFTER, DURING, Party, admin_headers, collected, sign_mandate

HOUR_MS = 3_600_000


@pytest.fixture
def market():
    return Market()


def status_of(reservation) -> str:
    return FinancialRecord.get_by_id(reservation.id).financial_status


def self_billed(reservation) -> list[Invoice]:
    return list(Invoice.select().where(Invoice.reservation_id == reservation.id,
                                       Invoice.kind == "supplier_self_billed"))


def open_incident_on(reservation) -> ReservationIncident:
    return ReservationIncident.create(
        reservation_id=reservation.id, organization_id=reservation.industrial_organization_id,
        status=IncidentStatus.OPEN, reason="Meuble absent", declared_by_user_id="u", declared_at=DURING)


def refuse_invoices_of(reservation) -> None:
    """A database that refuses this reservation's invoice (rolled back with the test)."""
    database.execute_sql("CREATE FUNCTION test_refuse_invoice() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                         "RAISE EXCEPTION 'refused by the test'; END $$")
    database.execute_sql("CREATE TRIGGER test_refuse_invoice BEFORE INSERT ON billing_invoice FOR EACH ROW WHEN "
                         f"(NEW.reservation_id = '{reservation.id}') EXECUTE FUNCTION test_refuse_invoice()")


@pytest.mark.owner  # refuse_invoices_of creates a trigger
def test_a_pass_counts_each_outcome_and_a_failing_unit_never_stops_it(market, storage, seeded,
                                                                       platform_config, log_lines):  # noqa: F811
    industrial = approved_org("industrial")
    signed, unsigned = approved_org("distributor"), approved_org("distributor")
    sign_mandate(signed)
    failing = collected(market, industrial, signed, day=-1)  # ends first: the pass meets it first
    issued = collected(market, industrial, signed)
    no_mandate = collected(market, industrial, unsigned)
    with_incident = collected(market, industrial, signed)
    open_incident_on(with_incident)
    not_due = collected(market, industrial, signed, day=5)  # ends Sunday 20 December: due after Wednesday 23
    collected(market, industrial, signed, day=10)  # not ended yet: not selected
    market.reservation(industrial, signed, day=-3)  # approved, never collected: not selected
    refuse_invoices_of(failing)
    with clock.frozen_at(AFTER):
        counters = scheduler.run_if_due(interval_ms=HOUR_MS, config=platform_config)
    assert counters == {"eligible": 5, "issued": 1, "skippedNoMandate": 1, "skippedOpenIncident": 1,
                        "skippedNotDue": 1, "failed": 1, "alreadySelfBilled": 0, "skippedNothingToSettle": 0}
    (line,) = [x for x in log_lines() if x["scope"] == "billing.supplier.self_billing.pass"]
    assert {k: line[k] for k in scheduler.COUNTERS} == {k: counters[k] for k in scheduler.COUNTERS}
    (failure,) = [x for x in log_lines() if x["scope"] == "billing.supplier.self_billing.trigger_failed"]
    assert failure["reservationId"] == failing.id and "refused by the test" in failure["error"]
    skipped = [x for x in log_lines() if x["scope"].startswith("billing.supplier.self_billing.skipped_")]
    assert {x["reservationId"] for x in skipped} == {no_mandate.id, with_incident.id}
    for untouched in (failing, no_mandate, with_incident, not_due):
        assert status_of(untouched) == "reservation_total_paid" and not self_billed(untouched)

    (invoice,) = self_billed(issued)
    assert invoice.number.startswith(f"FAC-SUP-{signed.siren}-2026-")
    assert (invoice.issuer_organization_id, invoice.customer_organization_id) == (signed.id, None)
    assert (invoice.amount_excl_tax_cents, invoice.status, invoice.issuer["legalName"]) == (
        100_000, "issued", f"{signed.legal_name} SAS")
    assert status_of(issued) == "supplier_settlement_pending"
    # The purchase of the store's share (AC), VAT deductible once paid, the distributor's payable by SIREN.
    assert book_totals(invoice_id=invoice.id) == {("604", "debit"): 100_000, ("44564", "debit"): 20_000,
                                                  ("401", "credit"): 120_000}
    hooks = OutboxMessage.select().where(OutboxMessage.actor_name == "run_post_invoice_hook")
    assert [invoice.id] in [row.args for row in hooks]  # the hook runs once the unit is committed
    outcome = run_post_invoice_hook(invoice.id, storage=storage, config=platform_config)
    xml = check_pdf(storage.read_bytes(STORAGE_CONTEXT, outcome.pdf_storage_key))
    assert b"<ram:TypeCode>389</ram:TypeCode>" in xml and b"Autofacturation" in xml

    # The interval: no pass before it has elapsed; the next one finds what is due by then.
    with clock.frozen_at(AFTER + timedelta(minutes=30)):
        assert scheduler.run_if_due(interval_ms=HOUR_MS, config=platform_config) is None
    ReservationIncident.update(status=IncidentStatus.RELEASED, resolution_note="posé", released_at=AFTER,
                               released_by_user_id="admin").where(
        ReservationIncident.reservation_id == with_incident.id).execute()
    with clock.frozen_at(AFTER + timedelta(days=3)):
        later = scheduler.run_if_due(interval_ms=HOUR_MS, config=platform_config)
    assert (later["eligible"], later["issued"], later["skippedNoMandate"], later["failed"]) == (4, 2, 1, 1)
    assert self_billed(with_incident) and self_billed(not_due)
    passes = list(scheduler.SelfBillingPass.select().order_by(scheduler.SelfBillingPass.started_at))
    assert [(p.outcome, p.issued, p.failed) for p in passes] == [("completed", 1, 1), ("completed", 2, 1)]


def test_a_running_pass_holds_the_next_one_until_it_is_abandoned():
    with clock.frozen_at(AFTER):
        first = scheduler.start_pass_if_due(60_000)
        assert first is not None and scheduler.start_pass_if_due(60_000) is None
    with clock.frozen_at(AFTER + timedelta(minutes=10)):
        assert scheduler.start_pass_if_due(60_000) is None  # still running
    with clock.frozen_at(AFTER + scheduler.ABANDONED_AFTER + timedelta(seconds=1)):
        assert scheduler.start_pass_if_due(60_000) is not None
    assert scheduler.SelfBillingPass.get_by_id(first.id).outcome == "abandoned"


def catch_up(client, reservation, headers, force=None, reason="Incident levé par téléphone"):
    query = "" if force is None else f"?force={force}"
    return client.simulate_post(f"/api/billing/reservations/{reservation.id}/supplier-self-billing{query}",
                                headers=headers, json={"reason": reason} if force == "true" and reason else None)


def test_catch_up_gates_force_and_idempotent_answer(client, market, log_lines):
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    admin = admin_headers()
    uncollected = market.reservation(industrial, distributor, day=-2)
    refused = catch_up(client, uncollected, admin)
    assert refused.status_code == 409 and refused.json["error"]["details"]["reason"] == "not_settleable"
    assert catch_up(client, market.reservation(industrial, distributor, approve=False), admin).status_code == 409
    reservation = collected(market, industrial, distributor)
    assert catch_up(client, reservation, Party("distributor").headers).status_code == 403
    assert catch_up(client, reservation, admin, force="maybe").status_code == 400
    no_mandate = catch_up(client, reservation, admin)
    assert no_mandate.status_code == 409 and no_mandate.json["error"]["code"] == "BILLING_MANDATE_MISSING"
    open_incident_on(reservation)
    assert catch_up(client, reservation, admin).json["error"]["code"] == "BILLING_MANDATE_MISSING"
    sign_mandate(distributor)
    blocked = catch_up(client, reservation, admin, force="false")
    assert blocked.status_code == 409 and blocked.json["error"]["code"] == "CONFLICT"
    assert blocked.json["error"]["details"]["reason"] == "incident_open"
    assert not self_billed(reservation) and status_of(reservation) == "reservation_total_paid"

    no_reason = catch_up(client, reservation, admin, force="true", reason=None)
    assert no_reason.status_code == 400 and "reason" in no_reason.json["error"]["details"]["fields"]
    forced = catch_up(client, reservation, admin, force="true")
    assert forced.status_code == 201, forced.json
    data = forced.json["data"]
    assert data["warnings"] == ["forced_with_open_incident"] and data["idempotent"] is False
    assert data["financialStatus"] == "supplier_settlement_pending"
    assert data["invoice"]["kind"] == "supplier_self_billed" and data["invoice"]["amountInclTaxCents"] == 120_000
    (audit,) = AuditEntry.select().where(AuditEntry.reservation_id == reservation.id,
                                         AuditEntry.action == "billing.supplier.self_billing.manual")
    assert audit.details["forced"] == ["forced_with_open_incident"] and audit.actor_user_id
    assert audit.reason == "Incident levé par téléphone"
    forced_lines = [x for x in log_lines() if x["scope"] == "billing.supplier.self_billing.forced_with_open_incident"]
    assert [x["level"] for x in forced_lines] == ["warn"]
    replay = catch_up(client, reservation, admin, force="true")
    assert replay.status_code == 200
    assert replay.json["data"] == {**data, "warnings": [], "idempotent": True}
    assert len(self_billed(reservation)) == 1

    bare = collected(market, industrial, approved_org("distributor"))
    open_incident_on(bare)
    both = catch_up(client, bare, admin, force="true")
    assert both.status_code == 201
    assert both.json["data"]["warnings"] == ["forced_with_open_incident", "forced_without_mandate"]
    assert {x["scope"] for x in log_lines() if x.get("reservationId") == bare.id} >= {
        "billing.supplier.self_billing.forced_without_mandate",
        "billing.supplier.self_billing.forced_with_open_incident", "billing.supplier.self_billing.issued"}
    assert catch_up(client, type("R", (), {"id": "missing"}), admin).status_code == 404


def test_a_plain_catch_up_needs_no_force_and_ignores_the_window(client, market):
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    sign_mandate(distributor)
    reservation = collected(market, industrial, distributor, day=30)  # not even started
    answer = catch_up(client, reservation, admin_headers())
    assert answer.status_code == 201 and answer.json["data"]["warnings"] == []
    assert answer.json["data"]["invoiceNumber"].startswith(f"FAC-SUP-{distributor.siren}-")


def test_a_self_billed_credit_note_books_a_supplier_credit_note_lettered_with_its_invoice(market, config):
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    sign_mandate(distributor)
    reservation = collected(market, industrial, distributor)
    with clock.frozen_at(AFTER):
        scheduler.self_bill_due_reservations(config=config)
    (invoice,) = self_billed(reservation)
    assert ledger.balance(Account.SUPPLIERS, distributor.siren) == -120_000
    answer = corrections.credit_in_full(invoice_number=invoice.number, reason="Prestation non conforme",
                                        user_id="admin", config=config)
    assert answer.credit_note_number.startswith(f"AV-SUP-{distributor.siren}-")
    assert ledger.balance(Account.SUPPLIERS, distributor.siren) == 0
    credit_note = Invoice.get(Invoice.number == answer.credit_note_number)
    assert book_totals(invoice_id=credit_note.id) == {("401", "debit"): 120_000, ("604", "credit"): 100_000,
                                                      ("44564", "credit"): 20_000}
    # The self-billed invoice's payable and its credit note's are lettered together.
    payable = [line for line in book_lines(reservation_id=reservation.id) if line["account"] == "401"]
    assert len(payable) == 2 and payable[0]["letter"] and payable[0]["letter"] == payable[1]["letter"]


def test_the_minute_job_honours_the_enabled_flag_and_the_interval(config):
    from dataclasses import replace

    from actors.billing.self_billing import self_billing_scheduler
    from backend.runtime import boot

    with clock.frozen_at(AFTER):
        self_billing_scheduler.fn()  # SELF_BILLING_SCHEDULER_ENABLED is false by default
        assert not scheduler.SelfBillingPass.select().exists()
        try:
            boot(replace(config, self_billing_scheduler_enabled=True, self_billing_scheduler_interval_ms=120_000),
                 role="test")
            self_billing_scheduler.fn()
            self_billing_scheduler.fn()  # the interval has not elapsed
            with clock.frozen_at(AFTER + timedelta(minutes=2)):
                self_billing_scheduler.fn()
        finally:
            boot(config, role="test")
    assert [p.outcome for p in scheduler.SelfBillingPass.select()] == ["completed", "completed"]


def test_a_partly_refunded_sale_with_no_store_share_left_is_skipped_not_failed(market, platform_config):  # noqa: F811
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    sign_mandate(distributor)
    reservation = market.reservation(industrial, distributor, price_cents=1, rate_bps=10_000)  # 1 + 1 cent
    collect.collect(reservation_id=reservation.id, industrial_organization_id=industrial.id,
                       method=PaymentMethod.BANK_TRANSFER, key="k", user_id=None, config=booted_config())
    sale = Invoice.get(Invoice.reservation_id == reservation.id, Invoice.kind == "platform_sale")
    corrections.refund(invoice_number=sale.number, amount_cents=1, reason="geste", method=PaymentMethod.BANK_TRANSFER,
                       user_id=None, config=booted_config())
    record = FinancialRecord.get_by_id(reservation.id)
    assert record.financial_status == "partially_refunded"
    assert store_share.store_share_left(record, credited_cents(sale.id)) == 0  # the refunded cent was the store's
    with clock.frozen_at(AFTER):
        first = scheduler.self_bill_due_reservations(config=platform_config)
        second = scheduler.self_bill_due_reservations(config=platform_config)
    assert first == second
    assert (first["eligible"], first["skippedNothingToSettle"], first["failed"], first["issued"]) == (1, 1, 0, 0)
    assert status_of(reservation) == "partially_refunded" and not self_billed(reservation)
    with pytest.raises(Conflict) as refused:  # the catch-up still says why
        self_billing.catch_up(reservation_id=reservation.id, user_id=None, config=platform_config)
    assert refused.value.details["reason"] == "not_settleable"
