"""The billing demo data: the demo industrial's approved reservations collected, one refund."""

from __future__ import annotations

from backend.billing.models import Invoice, LedgerEntry, PaymentOrder
from backend.marketplace.demo import INDUSTRIAL
from backend.runtime import current_runtime
from ops.seed import seed_demo


def test_the_demo_has_invoices_ledger_entries_and_a_refund_and_seeding_twice_adds_nothing():
    seed_demo(current_runtime())
    kinds = sorted(i.kind for i in Invoice.select().where(Invoice.customer_organization_id == INDUSTRIAL))
    assert kinds.count("platform_sale") >= 2 and kinds.count("platform_credit_note") == 1
    assert LedgerEntry.select().count() >= 9
    assert PaymentOrder.select().where(PaymentOrder.kind == "refund").count() == 1
    counts = (Invoice.select().count(), LedgerEntry.select().count(), PaymentOrder.select().count())
    seed_demo(current_runtime())
    assert (Invoice.select().count(), LedgerEntry.select().count(), PaymentOrder.select().count()) == counts
