"""Returned direct debits: the order `failed` with its code, the books reversed, the reservation due
again and collected again on the same invoice (admin route or retry pass, a new key), and the
second return of a mandate within 90 days stopping its automatic retries."""

from __future__ import annotations

from datetime import timedelta

import pytest

from backend import clock
from backend.billing.accounting.chart import Account
from backend.billing.accounting.ledger import balance
from backend.billing.bank import statements
from backend.billing.collection import admin, auto, collect
from backend.billing.models import (
    AuditEntry,
    FinancialRecord,
    Invoice,
    PaymentMethod,
    PaymentOrder,
    SepaMandate,
)
from backend.identity.models import Organization
from tests.billing.bank.statements_data import DAY, books_breaches, collected, config, credit, returned, statement
from tests.billing.helpers import Market, booted_config


def _import(*entries: str):
    return statements.import_statement(statement(*entries), config=config(), user_id=None)


def _siren(order: PaymentOrder) -> str:
    return Organization.get_by_id(order.organization_id).siren


def test_a_returned_debit_fails_its_order_reverses_the_books_and_the_sale_is_collected_again(log_lines):
    order = collected()
    siren, bank_before = _siren(order), balance(Account.BANK)
    answer = _import(credit(order), returned(order, "MD06"))
    assert (answer.matched, answer.returned, answer.unmatched) == (1, 1, 0)
    fresh = PaymentOrder.get_by_id(order.id)
    assert (fresh.status, fresh.failure_code, fresh.settlement, fresh.return_code, fresh.returned_on) == (
        "failed", "MD06", "returned", "MD06", DAY)
    assert FinancialRecord.get_by_id(order.reservation_id).financial_status == "reservation_total_due"
    assert balance(Account.CUSTOMERS, siren) == order.amount_cents  # owed again
    assert balance(Account.BANK) == bank_before  # the bank credited the debit, then took it back
    audit = AuditEntry.get(AuditEntry.payment_order_id == order.id)
    assert audit.details["code"] == "MD06" and audit.details["dueAgain"] is True
    [failed] = [line for line in log_lines() if line["scope"] == "billing.reservation.collect.failed"]
    assert (failed["paymentOrderId"], failed["code"], failed["reason"]) == (order.id, "MD06", "returned_debit")
    assert books_breaches() == []
    # The admin collects it again: a new order on the same invoice, no second sale.
    invoices = Invoice.select().where(Invoice.reservation_id == order.reservation_id).count()
    again = admin.collect_on_behalf(reservation_id=order.reservation_id, method=PaymentMethod.SEPA_DD,
                                               key="again-1", user_id=None, config=booted_config())
    assert again.payment_order_id != order.id and again.financial_status == "reservation_total_paid"
    assert again.invoice_number == Invoice.get_by_id(order.invoice_id).number
    assert Invoice.select().where(Invoice.reservation_id == order.reservation_id).count() == invoices
    new = PaymentOrder.get_by_id(again.payment_order_id)
    assert (new.invoice_id, new.amount_cents, new.settlement, new.status) == (
        order.invoice_id, order.amount_cents, "unsent", "paid")
    assert balance(Account.CUSTOMERS, siren) == order.amount_cents  # asked for, not received yet
    assert balance(Account.BANK) == bank_before
    assert books_breaches() == []
    # ... settled by the next statement; the same return again changes nothing.
    assert _import(credit(new)).matched == 1
    assert PaymentOrder.get_by_id(new.id).settlement == "settled"
    assert balance(Account.CUSTOMERS, siren) == 0 and balance(Account.BANK) == bank_before + order.amount_cents
    assert _import(returned(order, "MD06")).unmatched == 1


def test_the_retry_pass_collects_a_returned_sale_with_a_new_key():
    order = collected()
    _import(credit(order), returned(order, "AM04"))
    with clock.frozen_at(clock.now() + timedelta(hours=1)):
        assert auto.retry_due_collections(config=booted_config())["collected"] >= 1
    new = PaymentOrder.select().where(PaymentOrder.reservation_id == order.reservation_id,
                                      PaymentOrder.id != order.id).get()
    assert (new.invoice_id, new.status) == (order.invoice_id, "paid")
    assert collect.auto_collect_key(order.reservation_id, 1) == f"auto-collect-{order.reservation_id}-1"
    assert books_breaches() == []


def _returned_twice(first_day_gap: int):
    market = Market()
    first = collected(market=market)
    industrial = Organization.get_by_id(first.organization_id)
    second = collected(market=market, industrial=industrial)
    _import(credit(first), returned(first, "AM04", day=DAY))
    _import(credit(second), returned(second, "AM04", day=DAY + timedelta(days=first_day_gap)))
    return first, second


@pytest.mark.parametrize("gap,stopped", [(89, True), (91, False)])
def test_the_second_return_of_a_mandate_within_90_days_stops_its_automatic_retries(gap, stopped):
    first, second = _returned_twice(gap)
    mandate = SepaMandate.get(SepaMandate.mandate_ref == first.mandate_ref)
    assert (mandate.retries_stopped_at is not None) is stopped
    later = clock.now() + timedelta(days=gap, hours=1)
    with clock.frozen_at(later):
        due = auto.due_collections(timedelta(minutes=15))
    assert (first.reservation_id in due, second.reservation_id in due) == (not stopped, not stopped)
    if stopped:  # an admin decides: the admin route still collects
        admin.collect_on_behalf(reservation_id=first.reservation_id, method=PaymentMethod.BANK_TRANSFER,
                                           key="admin-decides", user_id=None, config=booted_config())
        assert FinancialRecord.get_by_id(first.reservation_id).financial_status == "reservation_total_paid"


def test_a_closed_account_stops_retries_at_once_and_unknown_returns_wait_for_an_admin():
    order, stranger = collected(), collected()
    answer = _import(credit(order), returned(order, "AC04"), returned(stranger, "AM04").replace(
        stranger.id.replace("-", ""), "0" * 32))
    assert (answer.returned, answer.unmatched) == (1, 1)
    assert SepaMandate.get(SepaMandate.mandate_ref == order.mandate_ref).retries_stopped_at is not None
    assert PaymentOrder.get_by_id(stranger.id).settlement == "unsent"


def test_a_returned_debit_whose_212_was_made_gets_its_negative_212_once():
    from backend.einvoicing import payment_reports
    from backend.einvoicing.models import PaymentReport

    order = collected()
    number = Invoice.get_by_id(order.invoice_id).number
    payment_reports.sweep()
    assert not PaymentReport.select().where(PaymentReport.payment_order_id == order.id).exists()  # not settled yet
    _import(credit(order))
    payment_reports.sweep()
    positive = PaymentReport.get(PaymentReport.idempotency_key == f"{number}:212:{order.id}")
    assert (positive.amount_cents, positive.paid_on) == (order.amount_cents, DAY)  # dated the bank's booking
    _import(returned(order, "MS02"))
    payment_reports.sweep()
    payment_reports.sweep()
    negative = PaymentReport.get(PaymentReport.idempotency_key == f"{number}:212:{order.id}:returned")
    assert (negative.amount_cents, negative.paid_on) == (-order.amount_cents, DAY)
    assert negative.amounts[0]["vatCents"] < 0
    assert PaymentReport.select().where(PaymentReport.payment_order_id == order.id).count() == 2
