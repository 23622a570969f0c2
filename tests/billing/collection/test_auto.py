"""Auto-collection: an outbox subscriber of `reservation.approved` (review approval and accepted
counter-proposal); a failure leaves the approval and `reservation_total_due`, the manual route
then succeeds."""

from __future__ import annotations

import time

import pytest

from actors import billing as billing_actors
from backend import clock
from backend.billing.collection import collect
from backend.billing.models import FinancialRecord, Invoice, PaymentMethod, PaymentOrder, SepaMandate
from backend.db import database, transaction
from backend.errors import Conflict
from backend.marketplace import reservations
from backend.marketplace.models import Reservation
from backend.marketplace.reservations import Review
from backend.outbox import OutboxMessage
from tests.billing.helpers import RATE_BPS, Market, approved_org, booted_config

ACTOR = "auto_collect_reservation"


def run_auto_collections() -> int:
    """Run the auto-collection messages the outbox holds, as the worker would."""
    rows = list(OutboxMessage.select().where(OutboxMessage.actor_name == ACTOR).order_by(OutboxMessage.id))
    for row in rows:
        billing_actors.auto_collect_reservation.fn(*row.args)
    return len(rows)


def _scopes(log_lines, prefix="billing.reservation.collect."):
    return [(line["scope"], line.get("paymentMethod")) for line in log_lines() if line["scope"].startswith(prefix)]


def test_a_review_approval_collects_by_bank_transfer_without_a_mandate(log_lines):
    reservation = Market().reservation(approved_org("industrial"), approved_org("distributor"))
    assert run_auto_collections() == 1
    invoice = Invoice.get(Invoice.reservation_id == reservation.id)
    order = PaymentOrder.get(PaymentOrder.reservation_id == reservation.id)
    assert (invoice.kind, order.method, order.status) == ("platform_sale", "bank_transfer", "paid")
    assert FinancialRecord.get_by_id(reservation.id).financial_status == "reservation_total_paid"
    scopes = _scopes(log_lines)
    assert ("billing.reservation.collect.auto_triggered", "bank_transfer") in scopes
    assert ("billing.reservation.collect.auto_succeeded", "bank_transfer") in scopes
    # the manual route with the auto key replays the automatic collection
    replay = collect.collect(reservation_id=reservation.id,
                                industrial_organization_id=reservation.industrial_organization_id,
                                method=PaymentMethod.BANK_TRANSFER, key=collect.auto_collect_key(reservation.id),
                                user_id=None, config=booted_config())
    assert replay.idempotent and replay.invoice_number == invoice.number


def test_an_accepted_counter_proposal_collects_by_sepa_dd_with_an_active_mandate():
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    SepaMandate.create(organization_id=industrial.id, mandate_ref="VTR-AUTO-1", iban="FR76", signed_at=clock.now())
    reservation = Market().reservation(industrial, distributor, approve=False, price_cents=50_000)
    reservations.review_reservation(reservation_id=reservation.id, distributor_organization_id=distributor.id,
                                    decision=Review.COUNTER_PROPOSAL, price_cents=40_000)
    assert run_auto_collections() == 0
    reservations.accept_counter_proposal(reservation_id=reservation.id, industrial_organization_id=industrial.id,
                                         rate_bps=RATE_BPS)
    assert Reservation.get_by_id(reservation.id).billing_model == "principal_seller"
    assert run_auto_collections() == 1
    order = PaymentOrder.get(PaymentOrder.reservation_id == reservation.id)
    assert (order.method, order.mandate_ref, order.amount_cents) == ("sepa_dd", "VTR-AUTO-1", 57_600)  # 48 000 HT


def test_a_failure_leaves_the_approval_and_the_manual_route_then_succeeds(monkeypatch, log_lines):
    reservation = Market().reservation(approved_org("industrial"), approved_org("distributor"))

    def broken(*args, **kwargs):
        raise Conflict("injected invoicing failure", reason="injected")

    with monkeypatch.context() as patch:
        patch.setattr(collect, "issue_invoice", broken)
        run_auto_collections()
    assert Reservation.get_by_id(reservation.id).status == "approved"
    assert FinancialRecord.get_by_id(reservation.id).financial_status == "reservation_total_due"
    assert not PaymentOrder.select().where(PaymentOrder.reservation_id == reservation.id).exists()
    failed = [line for line in log_lines() if line["scope"] == "billing.reservation.collect.auto_failed"]
    assert failed and failed[0]["code"] == "CONFLICT" and failed[0]["errorMessage"] == "injected invoicing failure"
    assert failed[0]["paymentMethod"] == "bank_transfer"
    manual = collect.collect(reservation_id=reservation.id,
                                industrial_organization_id=reservation.industrial_organization_id,
                                method=PaymentMethod.BANK_TRANSFER, key="manual-retry", user_id=None,
                                config=booted_config())
    assert manual.financial_status == "reservation_total_paid"


def test_non_principal_seller_reservations_are_skipped(log_lines):
    reservation = Market().reservation(approved_org("industrial"), approved_org("distributor"), approve=False)
    Reservation.update(billing_model="legacy_mandate").where(Reservation.id == reservation.id).execute()
    reservations.review_reservation(reservation_id=reservation.id,
                                    distributor_organization_id=reservation.distributor_organization_id,
                                    decision=Review.APPROVED)
    run_auto_collections()
    assert not FinancialRecord.select().where(FinancialRecord.reservation_id == reservation.id).exists()
    assert ("billing.reservation.collect.auto_skipped", None) in _scopes(log_lines)


def test_a_second_delivery_of_the_message_collects_once():
    reservation = Market().reservation(approved_org("industrial"), approved_org("distributor"))
    run_auto_collections()
    run_auto_collections()
    assert Invoice.select().where(Invoice.reservation_id == reservation.id).count() == 1


@pytest.mark.committed
def test_a_real_worker_collects_after_the_approval_commits(worker):
    with database.connection_context():
        with transaction():
            reservation = Market().reservation(approved_org("industrial"), approved_org("distributor"))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not Invoice.select().where(
                Invoice.reservation_id == reservation.id).exists():
            time.sleep(0.05)
        invoice = Invoice.get(Invoice.reservation_id == reservation.id)
        assert invoice.kind == "platform_sale" and invoice.status == "paid"
