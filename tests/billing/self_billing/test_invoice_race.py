"""Two scheduler passes racing in two threads (each with its own connection, committing for
real) self-bill a reservation once: the unit locks the financial record and reads the
self-billed invoice again under the lock, and the unique index would refuse a second one."""

from __future__ import annotations

import threading

import pytest

from backend import clock
from backend.billing.models import FinancialRecord, Invoice, InvoiceKind
from backend.billing.self_billing import scheduler
from backend.db import database, transaction
from tests.billing.helpers import Market, approved_org, booted_config
from tests.billing.self_billing.data import AFTER, collected, sign_mandate

RESERVATIONS = 6


@pytest.mark.committed
def test_two_racing_passes_issue_one_invoice_per_reservation():
    with database.connection_context(), transaction():
        market = Market()
        industrial, distributor = approved_org("industrial"), approved_org("distributor")
        sign_mandate(distributor)
        ids = [collected(market, industrial, distributor, day=-i).id for i in range(RESERVATIONS)]
    start = threading.Barrier(2)
    results: list[dict] = []
    errors: list[BaseException] = []

    def one_pass() -> None:
        try:
            with database.connection_context():
                start.wait(timeout=30)
                results.append(scheduler.self_bill_due_reservations(config=booted_config()))
        except BaseException as exc:  # reported below
            errors.append(exc)

    with clock.frozen_at(AFTER):
        threads = [threading.Thread(target=one_pass) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    assert not errors and len(results) == 2
    assert sum(r["issued"] for r in results) == RESERVATIONS
    assert sum(r["failed"] for r in results) == 0
    # What one pass issued, the other found issued (under the lock) or did not select at all.
    assert sum(r["alreadySelfBilled"] for r in results) == sum(r["eligible"] for r in results) - RESERVATIONS
    with database.connection_context():
        invoices = list(Invoice.select().where(Invoice.kind == InvoiceKind.SUPPLIER_SELF_BILLED,
                                               Invoice.reservation_id.in_(ids)))
        assert sorted(i.reservation_id for i in invoices) == sorted(ids)
        assert sorted(i.sequence for i in invoices) == list(range(1, RESERVATIONS + 1))  # gapless series
        assert {r.financial_status for r in FinancialRecord.select().where(FinancialRecord.reservation_id.in_(ids))} \
            == {"supplier_settlement_pending"}
