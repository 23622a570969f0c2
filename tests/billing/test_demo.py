"""The billing demo data: the demo industrial's approved reservations collected, one refund."""

from __future__ import annotations

from backend.billing.models import AccountingLine, Invoice, PaymentOrder
from backend.marketplace.demo import INDUSTRIAL
from backend.runtime import current_runtime
from ops.seed import seed_demo


def test_the_demo_has_invoices_entries_in_the_books_and_a_refund_and_seeding_twice_adds_nothing():
    seed_demo(current_runtime())
    kinds = sorted(i.kind for i in Invoice.select().where(Invoice.customer_organization_id == INDUSTRIAL))
    assert kinds.count("platform_sale") >= 2 and kinds.count("platform_credit_note") == 1
    assert AccountingLine.select().count() >= 9
    assert PaymentOrder.select().where(PaymentOrder.kind == "refund").count() == 1
    for invoice in Invoice.select().where(Invoice.customer_organization_id == INDUSTRIAL):  # no placeholder printed
        assert invoice.customer["complete"] and invoice.customer["legalName"] == "Laiterie Démo SA"
        assert (invoice.customer["street"], invoice.customer["postalCode"]) == ("12 rue des Lilas", "74000")
    counts = (Invoice.select().count(), AccountingLine.select().count(), PaymentOrder.select().count())
    seed_demo(current_runtime())
    assert (Invoice.select().count(), AccountingLine.select().count(), PaymentOrder.select().count()) == counts


def test_the_demo_distributor_has_an_ended_collected_reservation_due_for_self_billing():
    from datetime import UTC, datetime

    from backend import clock
    from backend.billing.models import FinancialRecord, SelfBillingMandate
    from backend.billing.self_billing import scheduler
    from backend.billing.self_billing.business_days import self_billing_due
    from backend.marketplace.demo import DISTRIBUTOR
    from backend.marketplace.models import Reservation

    seed_demo(current_runtime())
    ended = (Reservation.select().join(FinancialRecord, on=FinancialRecord.reservation_id == Reservation.id)
             .where(Reservation.distributor_organization_id == DISTRIBUTOR,
                    FinancialRecord.financial_status == "reservation_total_paid"))
    due = [r for r in ended if self_billing_due(r.ends_at, datetime(2026, 11, 24, tzinfo=UTC))]
    assert len(due) == 1
    if not SelfBillingMandate.select().where(SelfBillingMandate.organization_id == DISTRIBUTOR,
                                             SelfBillingMandate.status == "signed").exists():
        from backend.identity.models import Organization
        from tests.billing.self_billing.data import sign_mandate

        sign_mandate(Organization.get_by_id(DISTRIBUTOR))  # the demo's own once the mandate demo seeds it
    with clock.frozen_at(datetime(2026, 11, 24, 12, tzinfo=UTC)):
        counters = scheduler.self_bill_due_reservations(config=current_runtime().config)
    assert counters["issued"] == 1 and counters["failed"] == 0
    assert FinancialRecord.get_by_id(due[0].id).financial_status == "supplier_settlement_pending"
    self_billed = Invoice.get(Invoice.reservation_id == due[0].id, Invoice.kind == "supplier_self_billed")
    assert self_billed.issuer["complete"] and self_billed.issuer["city"] == "Lyon"  # the distributor, the seller
