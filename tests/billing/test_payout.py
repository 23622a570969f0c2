"""Supplier payout over HTTP: `supplier_settlement_pending` only, Idempotency-Key (required,
replayed, reused), the payment order paid at once including VAT, the journal settling the
invoiced payable, the invoice paid, the financial status, the audit entry; nothing to pay once
the self-billed invoice is credited in full."""

from __future__ import annotations

import pytest

from backend import clock
from backend.billing import corrections
from backend.billing.accounting import ledger
from backend.billing.accounting.chart import Account
from backend.billing.models import AuditEntry, FinancialRecord, Invoice, PaymentOrder
from backend.billing.self_billing import acceptance, scheduler
from tests.billing.accounting.books import book_lines, book_totals
from tests.billing.helpers import Market, approved_org, customer_paid
from tests.billing.self_billing.data import AFTER, Party, admin_headers, collected, sign_mandate


@pytest.fixture
def settled(config):
    """A reservation self-billed by a scheduler pass: `supplier_settlement_pending`."""
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    sign_mandate(distributor)
    reservation = collected(Market(), industrial, distributor)
    customer_paid(reservation.id)
    with clock.frozen_at(AFTER):
        assert scheduler.self_bill_due_reservations(config=config)["issued"] == 1
    invoice = Invoice.get(Invoice.reservation_id == reservation.id, Invoice.kind == "supplier_self_billed")
    acceptance.accept(invoice_number=invoice.number, organization_id=distributor.id, user_id=None)
    return reservation, distributor


def payout(client, reservation, headers, key="payout-1"):
    extra = {"Idempotency-Key": key} if key is not None else {}
    return client.simulate_post(f"/api/admin/billing/reservations/{reservation.id}/payout",
                                headers={**headers, **extra})


def test_payout_pays_the_self_billed_invoice_once(client, settled, log_lines):
    reservation, distributor = settled
    admin = admin_headers()
    assert payout(client, reservation, admin, key=None).status_code == 400
    assert payout(client, reservation, Party("distributor").headers).status_code == 403
    paid = payout(client, reservation, admin)
    assert paid.status_code == 200, paid.json
    data = paid.json["data"]
    invoice = Invoice.get(Invoice.reservation_id == reservation.id, Invoice.kind == "supplier_self_billed")
    assert data == {"reservationId": reservation.id, "paymentOrderId": data["paymentOrderId"],
                    "invoiceNumber": invoice.number, "organizationId": distributor.id, "amountExclTaxCents": 100_000,
                    "amountCents": 120_000, "deductedCents": 0, "financialStatus": "supplier_settlement_paid",
                    "paymentStatus": "paid", "idempotent": False}
    order = PaymentOrder.get_by_id(data["paymentOrderId"])
    assert (order.kind, order.method, order.status, order.organization_id, order.amount_cents) == (
        "supplier_payout", "bank_transfer", "paid", distributor.id, 120_000)
    assert order.paid_at is not None and order.invoice_id == invoice.id
    assert (invoice.status, invoice.paid_at is not None) == ("paid", True)
    assert FinancialRecord.get_by_id(reservation.id).financial_status == "supplier_settlement_paid"
    assert book_totals(payment_order_id=order.id) == {("401", "debit"): 120_000, ("473", "credit"): 120_000}
    assert ledger.balance(Account.SUPPLIERS, distributor.siren) == 0
    payable = [line for line in book_lines(reservation_id=reservation.id) if line["account"] == "401"]
    assert len(payable) == 2 and payable[0]["letter"] and payable[0]["letter"] == payable[1]["letter"]
    audit = AuditEntry.get(AuditEntry.payment_order_id == order.id)
    assert (audit.action, audit.reservation_id) == ("billing.supplier.payout", reservation.id)
    scopes = [x["scope"] for x in log_lines() if x.get("reservationId") == reservation.id]
    assert scopes[-2:] == ["billing.supplier.payout.requested", "billing.supplier.payout.paid"]

    replay = payout(client, reservation, admin)
    assert replay.status_code == 200 and replay.json["data"] == {**data, "idempotent": True}
    again = payout(client, reservation, admin, key="payout-2")
    assert again.status_code == 409 and again.json["error"]["details"]["reason"] == "not_settlement_pending"
    assert PaymentOrder.select().where(PaymentOrder.reservation_id == reservation.id,
                                       PaymentOrder.kind == "supplier_payout").count() == 1
    assert "billing.supplier.payout.failed" in [x["scope"] for x in log_lines()]


def test_payout_before_self_billing_or_after_a_full_credit_note_is_409(client, settled, config):
    """A self-billed invoice credited in full voids the settlement (API.md): nothing is pending."""
    reservation, _ = settled
    admin = admin_headers()
    early = collected(Market(), approved_org("industrial"), approved_org("distributor"))
    refused = payout(client, early, admin)
    assert refused.status_code == 409 and refused.json["error"]["details"]["reason"] == "not_settlement_pending"
    assert payout(client, type("R", (), {"id": "missing"}), admin).status_code == 404
    invoice = Invoice.get(Invoice.reservation_id == reservation.id, Invoice.kind == "supplier_self_billed")
    corrections.credit_in_full(invoice_number=invoice.number, reason="Prestation annulée", user_id="admin",
                               config=config)
    nothing = payout(client, reservation, admin, key="after-credit")
    assert nothing.status_code == 409 and nothing.json["error"]["details"]["reason"] == "not_settlement_pending"
    assert FinancialRecord.get_by_id(reservation.id).financial_status == "reservation_total_paid"
    assert not PaymentOrder.select().where(PaymentOrder.reservation_id == reservation.id,
                                           PaymentOrder.kind == "supplier_payout").exists()
