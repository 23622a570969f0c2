"""Collection of a principal_seller reservation: the seven steps, refusals, SEPA mandate."""

from __future__ import annotations

import pytest

from backend import events
from backend.billing.collection import collect
from backend.billing.models import (
    AccountingLine,
    FinancialRecord,
    IdempotencyRecord,
    Invoice,
    PaymentMethod,
    PaymentOrder,
    SepaMandate,
)
from backend.errors import Conflict, NotFound
from backend.marketplace.models import Reservation
from backend.outbox import OutboxMessage
from tests.billing.accounting.books import book_lines
from tests.billing.bank.statements_data import booked
from tests.billing.helpers import Market, approved_org, booted_config


@pytest.fixture
def market():
    return Market()


def _collect(reservation, key="k-1", method=PaymentMethod.BANK_TRANSFER, organization_id=None):
    return collect.collect(reservation_id=reservation.id,
                              industrial_organization_id=organization_id or reservation.industrial_organization_id,
                              method=method, key=key, user_id=None, config=booted_config())


def test_collection_pays_the_total_issues_the_sale_and_books_the_sale_and_its_payment(market):
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    reservation = market.reservation(industrial, distributor, price_cents=100_000)
    answer = _collect(reservation)
    assert answer.financial_status == "reservation_total_paid" and answer.payment_status == "paid"
    assert answer.idempotent is False and answer.invoice_number.startswith("FAC-RES-")
    order = PaymentOrder.get_by_id(answer.payment_order_id)
    assert (order.kind, order.method, order.amount_cents) == ("reservation_total", "bank_transfer", 144_000)
    invoice = Invoice.get(Invoice.number == answer.invoice_number)
    assert (invoice.kind, invoice.status, invoice.amount_excl_tax_cents) == ("platform_sale", "paid", 120_000)
    assert invoice.customer_organization_id == industrial.id and invoice.reservation_id == reservation.id
    # The sale (VE); its payment (BQ) once the bank books it, the customer's receivable lettered with it.
    sale = [("VE", "411", 144_000, 0), ("VE", "706", 0, 120_000), ("VE", "44574", 0, 24_000)]  # VAT due when paid
    assert [(line["journal_code"], line["account"], line["debit_cents"], line["credit_cents"])
            for line in book_lines(reservation_id=reservation.id)] == sale
    booked(order)
    lines = book_lines(reservation_id=reservation.id)
    assert [(line["journal_code"], line["account"], line["debit_cents"], line["credit_cents"]) for line in lines] == [
        *sale, ("BQ", "512", 144_000, 0), ("BQ", "411", 0, 144_000),
        ("BQ", "44574", 24_000, 0), ("BQ", "44571", 0, 24_000)]  # paid: its VAT is due
    assert {line["piece_ref"] for line in lines} == {invoice.number}
    receivable = [line for line in lines if line["account"] == "411"]
    assert {line["aux_account"] for line in receivable} == {industrial.siren}
    assert receivable[0]["letter"] is not None and receivable[0]["letter"] == receivable[1]["letter"]
    record = FinancialRecord.get_by_id(reservation.id)
    assert (record.financial_status, record.total_cents, record.commission_cents) == (
        "reservation_total_paid", 120_000, 20_000)
    # `invoice.issued`, written by the collection's write statement: one row per subscriber.
    rows = [row for row in OutboxMessage.select() if row.args == [invoice.id]]
    assert sorted(row.actor_name for row in rows) == sorted(events.SUBSCRIBERS[events.INVOICE_ISSUED])


def test_a_second_key_cannot_collect_twice(market):
    reservation = market.reservation(approved_org("industrial"), approved_org("distributor"))
    _collect(reservation, key="first")
    with pytest.raises(Conflict) as refused:
        _collect(reservation, key="second")
    assert refused.value.details["reason"] == "not_due"


def test_a_record_no_longer_due_writes_nothing_and_is_refused(market):
    """The record moves only from `reservation_total_due`: a collection of a reservation already
    collected writes no payment order, journal, key answer, invoice or outbox row, and the answer
    is 409 `not_due` with the record's actual status."""
    reservation = market.reservation(approved_org("industrial"), approved_org("distributor"))
    _collect(reservation, key="first")
    counts = (PaymentOrder.select().count(), AccountingLine.select().count(), Invoice.select().count(),
              OutboxMessage.select().count())
    with pytest.raises(Conflict) as refused:
        _collect(reservation, key="second")
    assert refused.value.details == {"reason": "not_due", "financialStatus": "reservation_total_paid"}
    assert (PaymentOrder.select().count(), AccountingLine.select().count(), Invoice.select().count(),
            OutboxMessage.select().count()) == counts
    assert IdempotencyRecord.select().where(IdempotencyRecord.key == "second").count() == 0


def test_refusals_not_approved_not_principal_seller_other_organization(market):
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    pending = market.reservation(industrial, distributor, approve=False)
    with pytest.raises(Conflict) as refused:
        _collect(pending)
    assert refused.value.details["reason"] == "reservation_not_approved"
    legacy = market.reservation(industrial, distributor, day=30)
    Reservation.update(billing_model=None).where(Reservation.id == legacy.id).execute()
    with pytest.raises(Conflict) as refused:
        _collect(legacy)
    assert refused.value.details["reason"] == "not_principal_seller"
    with pytest.raises(NotFound):
        _collect(legacy, organization_id=approved_org("industrial").id)
    assert not FinancialRecord.select().where(FinancialRecord.reservation_id.in_([pending.id, legacy.id])).exists()


def test_sepa_dd_needs_an_active_mandate_and_records_its_reference(market):
    industrial = approved_org("industrial")
    reservation = market.reservation(industrial, approved_org("distributor"))
    with pytest.raises(Conflict) as refused:
        _collect(reservation, method=PaymentMethod.SEPA_DD)
    assert refused.value.details["reason"] == "sepa_mandate_missing"
    assert FinancialRecord.get_by_id(reservation.id).financial_status == "reservation_total_due"
    from backend import clock

    mandate = SepaMandate.create(organization_id=industrial.id, mandate_ref="VTR-TEST-1", iban="FR76...",
                                 signed_at=clock.now())
    answer = _collect(reservation, method=PaymentMethod.SEPA_DD)
    assert PaymentOrder.get_by_id(answer.payment_order_id).mandate_ref == mandate.mandate_ref
