"""Statements in: a camt.053 matched (end-to-end id, then invoice number with the exact amount),
imported once, and every bad document refused whole."""

from __future__ import annotations

import pytest

from backend.billing.bank import statements
from backend.billing.models import BankLine, BankStatement, PaymentMethod, PaymentOrder
from backend.errors import ValidationError
from tests.billing.bank.statements_data import (
    DAY,
    books_breaches,
    collected,
    config,
    credit,
    notification,
    statement,
)


def _import(document: bytes):
    return statements.import_statement(document, config=config(), user_id=None)


def test_a_statement_settles_by_end_to_end_id_then_by_invoice_number_and_twice_changes_nothing():
    debit, transfer, short, twice = (collected(), *(collected(PaymentMethod.BANK_TRANSFER) for _ in range(3)))
    document = statement(credit(debit), credit(transfer, by_number=True),
                         credit(short, by_number=True, amount=short.amount_cents - 100),
                         credit(twice, by_number=True), credit(twice, by_number=True),
                         credit(debit, amount=5000, by_number=True))  # an unknown payer: no number, no id
    answer = _import(document)
    assert (answer.lines, answer.matched, answer.returned, answer.unmatched, answer.created) == (6, 3, 0, 3, True)
    for order in (debit, transfer, twice):
        fresh = PaymentOrder.get_by_id(order.id)
        assert (fresh.settlement, fresh.settled_on) == ("settled", DAY)
    assert PaymentOrder.get_by_id(short.id).settlement == "unsent"  # a short payment waits for an admin
    again = _import(document)
    assert (again.id, again.matched, again.unmatched, again.created) == (answer.id, 3, 3, False)
    assert BankLine.select().where(BankLine.statement_id == answer.id).count() == 6
    assert books_breaches() == []


@pytest.mark.parametrize("document,reason", [
    (b"x" * (32 * 1024 * 1024 + 1), "too_large"),
    (b"<Document", "not_xml"),
    (b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY e SYSTEM "file:///etc/passwd">]><d>&e;</d>', "dtd"),
    (b'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.008.001.08"/>', "not_camt"),
])
def test_what_is_not_a_camt_document_is_refused_with_its_reason(document, reason):
    with pytest.raises(ValidationError) as refused:
        _import(document)
    assert refused.value.details["reason"] == reason


def test_a_bad_statement_is_refused_whole():
    good, other = collected(), collected()
    before = BankStatement.select().count()
    cases = {
        "account": statement(credit(good), iban="FR7630004000031234567890143"),
        "control_sum": statement(credit(good), credit(other), credits_cents=1, debits_cents=0),
        "currency": statement(credit(good), credit(other).replace('Ccy="EUR"', 'Ccy="USD"')),
        "malformed": statement(credit(good), credit(other).replace("</Amt>", "1</Amt>", 1)),  # a third decimal
    }
    for reason, document in cases.items():
        with pytest.raises(ValidationError) as refused:
            _import(document)
        assert refused.value.details["reason"] == reason, reason
    assert BankStatement.select().count() == before
    assert PaymentOrder.get_by_id(good.id).settlement == "unsent"


def test_the_unmatched_queue_and_the_manual_match():
    order = collected(PaymentMethod.BANK_TRANSFER)
    answer = _import(statement(credit(order, amount=order.amount_cents - 1, by_number=True),
                               credit(order, by_number=True).replace("Facture", "Fact. pour")
                               .replace(order.invoice_id, "")))
    assert answer.unmatched >= 1
    waiting = [line for line in statements.unmatched(page=1, page_size=100).items if line.statement_id == answer.id]
    short = next(line for line in waiting if line.amount_cents == order.amount_cents - 1)
    from backend.errors import Conflict

    with pytest.raises(Conflict) as refused:
        statements.match_line(short.id, payment_order_id=order.id, user_id=None)
    assert refused.value.details["reason"] == "line_mismatch"
    exact = next((line for line in waiting if line.amount_cents == order.amount_cents), None)
    if exact is None:  # the number in the remittance matched it already
        assert PaymentOrder.get_by_id(order.id).settlement == "settled"
        return
    line = statements.match_line(exact.id, payment_order_id=order.id, user_id=None)
    assert (line.state, line.payment_order_id) == ("matched", order.id)
    assert PaymentOrder.get_by_id(order.id).settlement == "settled"
    assert BankStatement.get_by_id(answer.id).unmatched == answer.unmatched - 1


def test_a_camt054_notification_then_the_camt053_repeating_its_line_settle_once():
    order, other = collected(), collected()
    line = credit(order, ref="BANKREF-0001")
    first = _import(notification(line))
    assert (first.lines, first.matched) == (1, 1)
    day_end = _import(statement(line, credit(other)))  # the end of day statement repeats the notified line
    assert (day_end.lines, day_end.matched, day_end.unmatched) == (2, 2, 0)
    assert BankLine.select().where(BankLine.entry_key == "BANKREF-0001").count() == 1
    assert BankLine.select().where(BankLine.statement_id == day_end.id).count() == 1  # only the new line
    assert {PaymentOrder.get_by_id(o.id).settlement for o in (order, other)} == {"settled"}
