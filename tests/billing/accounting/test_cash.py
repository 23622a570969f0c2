"""The books follow the bank (docs/accounting.md, "The books follow the bank"): each payment posts
at each stage the bank gives it, entry lines asserted, and `512` moves with statement lines only."""

from __future__ import annotations

from datetime import date

import pytest

from backend.billing.accounting import cash
from backend.billing.accounting.chart import Account
from backend.billing.accounting.entries import Party
from backend.billing.accounting.ledger import Piece, balance
from backend.billing.bank import files, statements
from backend.billing.bank.end_to_end import end_to_end_id
from backend.billing.models import BankFileKind, Invoice, PaymentKind, PaymentMethod, PaymentOrder
from backend.identity.models import Organization
from backend.runtime import current_runtime
from ops.simulators.bank_store import entry_xml
from tests.billing.accounting.books import book_lines
from tests.billing.bank.data import bank_config, refund, sign_sepa_mandate
from tests.billing.bank.statements_data import DAY as BOOKED
from tests.billing.bank.statements_data import (
    books_breaches,
    collected,
    config,
    credit,
    number_of,
    returned,
    statement,
)
from tests.billing.helpers import approved_org

DAY = date(2026, 6, 15)
CUSTOMER, STORE = Party("552100554", "Client SAS"), Party("385347927", "Magasin SAS")
SALE = Piece("sale", "FAC-RES-2026-000001", DAY, CUSTOMER, 100_000, 20_000)
CREDIT_NOTE = Piece("cn", "AV-RES-2026-000001", DAY, CUSTOMER, 30_000, 6_000)
SELF_BILLED = Piece("sb", "FAC-SUP-385347927-2026-000001", DAY, STORE, 80_000, 16_000)
STORE_INVOICE = Piece("dep", "FAC-DEP-385347927-2026-000001", DAY, CUSTOMER, 30_000, 6_000, reservation_id="r-1")
PAYMENTS = {
    "collection": cash.Payment("po", PaymentKind.RESERVATION_TOTAL, 120_000, SALE, Account.CUSTOMERS, CUSTOMER,
                               "sale", True),
    "refund": cash.Payment("po", PaymentKind.REFUND, 36_000, CREDIT_NOTE, Account.CUSTOMERS, CUSTOMER, "sale", False),
    "payout": cash.Payment("po", PaymentKind.SUPPLIER_PAYOUT, 96_000, SELF_BILLED, Account.SUPPLIERS, STORE, "sb",
                           False),
    "legacy deposit": cash.Payment("po", PaymentKind.DEPOSIT, 36_000, STORE_INVOICE, Account.STORE_FUNDS, STORE, "r-1",
                                   True),
}
THIRD = {"collection": "411", "refund": "411", "payout": "401", "legacy deposit": "467"}


def _sides(entry) -> dict:
    return {(line.account.value, "D" if line.debit_cents else "C"): line.debit_cents or line.credit_cents
            for line in entry.lines}


@pytest.mark.parametrize("name", sorted(PAYMENTS))
def test_each_payment_posts_in_transit_then_to_512_or_straight_to_512(name):
    payment, third = PAYMENTS[name], THIRD[name]
    amount = payment.amount_cents
    in_file = cash.stage_entry(payment, cash.Stage.IN_FILE, day=DAY)
    from_transit = cash.stage_entry(payment, cash.Stage.BOOKED, day=DAY, from_transit=True, bank_line_id="l")
    direct = cash.stage_entry(payment, cash.Stage.BOOKED, day=DAY)
    waited = cash.stage_entry(payment, cash.Stage.BOOKED, day=DAY, cash=Account.SUSPENSE)
    if payment.incoming:
        assert _sides(in_file) == {("511", "D"): amount, (third, "C"): amount}
        assert _sides(from_transit) == {("512", "D"): amount, ("511", "C"): amount}
        assert _sides(direct) == {("512", "D"): amount, (third, "C"): amount}
        assert _sides(waited) == {("471", "D"): amount, (third, "C"): amount}
    else:
        assert _sides(in_file) == {(third, "D"): amount, ("473", "C"): amount}
        assert _sides(from_transit) == {("473", "D"): amount, ("512", "C"): amount}
        assert _sides(direct) == {(third, "D"): amount, ("512", "C"): amount}
        assert _sides(waited) == {(third, "D"): amount, ("471", "C"): amount}
    assert {entry.journal.value for entry in (in_file, from_transit, direct)} == {"BQ"}
    assert in_file.event == cash.IN_TRANSIT and direct.event == cash.BOOKED_EVENTS[payment.kind].value
    assert from_transit.bank_line_id == "l" and in_file.bank_line_id is None
    party_lines = [line for entry in (in_file, direct) for line in entry.lines if line.party]
    assert {(line.party, line.letter_group) for line in party_lines} == {(payment.party, payment.group)}


def _vat(order: PaymentOrder) -> int:
    """The VAT of the invoice `order` pays, all of it (the invoice's total)."""
    invoice = Invoice.get_by_id(order.invoice_id)
    return order.amount_cents - invoice.amount_excl_tax_cents


def _import(*entries: str):
    return statements.import_statement(statement(*entries), config=config(), user_id=None)


def _lines(order_id: str, event: str) -> list[tuple]:
    return [(line["account"], line["debit_cents"], line["credit_cents"])
            for line in book_lines(payment_order_id=order_id, event=event)]


def test_a_direct_debit_goes_in_transit_with_its_file_to_512_with_the_statement_and_back_with_its_return():
    industrial = approved_org("industrial")
    sign_sepa_mandate(industrial)
    order = collected(industrial=industrial)
    amount, siren = order.amount_cents, industrial.siren
    assert book_lines(payment_order_id=order.id) == []  # asked for: no money moved
    assert balance(Account.CUSTOMERS, siren) == amount and balance(Account.BANK) == 0
    files.make_file(BankFileKind.DIRECT_DEBIT, storage=current_runtime().storage, config=bank_config(), user_id=None)
    assert _lines(order.id, cash.IN_TRANSIT) == [("511", amount, 0), ("411", 0, amount)]
    assert balance(Account.CUSTOMERS, siren) == 0 and balance(Account.BANK) == 0
    assert [line["letter"] is not None for line in book_lines(event="sale_invoice", reservation_id=order.reservation_id)
            if line["account"] == "411"] == [True]  # the receivable lettered with the debit handed to the bank
    vat = _vat(order)
    assert balance(Account.VAT_COLLECTED_PENDING) == -vat and balance(Account.VAT_COLLECTED) == 0
    _import(credit(order))
    assert _lines(order.id, "collection") == [("512", amount, 0), ("511", 0, amount), ("44574", vat, 0),
                                              ("44571", 0, vat)]  # paid: its VAT is due
    assert balance(Account.RECEIPTS_IN_TRANSIT) == 0 and balance(Account.BANK) == amount
    _import(returned(order, "AM04"))
    assert _lines(order.id, "returned_debit") == [("411", amount, 0), ("512", 0, amount), ("44571", vat, 0),
                                                  ("44574", 0, vat)]  # not paid any more: pending again
    assert balance(Account.BANK) == 0 and balance(Account.CUSTOMERS, siren) == amount  # owed again
    assert balance(Account.VAT_COLLECTED_PENDING) == -vat and balance(Account.VAT_COLLECTED) == 0
    assert books_breaches() == []


def test_a_transfer_leaves_411_open_until_the_statement_line_settles_it_and_letters_with_that_line():
    order = collected(PaymentMethod.BANK_TRANSFER)
    amount = order.amount_cents
    assert book_lines(payment_order_id=order.id) == []
    _import(credit(order, by_number=True))
    vat = _vat(order)
    assert _lines(order.id, "collection") == [("512", amount, 0), ("411", 0, amount), ("44574", vat, 0),
                                              ("44571", 0, vat)]
    receivable = [line for line in book_lines(reservation_id=order.reservation_id) if line["account"] == "411"]
    assert len(receivable) == 2 and len({line["letter"] for line in receivable}) == 1 and receivable[0]["letter"]
    assert books_breaches() == []


def test_a_refund_is_in_transit_once_decided_and_leaves_512_when_the_bank_books_it():
    order = collected(PaymentMethod.BANK_TRANSFER)
    _import(credit(order, by_number=True))
    refunded = PaymentOrder.get_by_id(refund(number_of(order), 10_000).payment_order_id)
    amount = refunded.amount_cents
    assert _lines(refunded.id, cash.IN_TRANSIT) == [("411", amount, 0), ("473", 0, amount)]  # decided: on its way
    files.make_file(BankFileKind.CREDIT_TRANSFER, storage=current_runtime().storage, config=bank_config(),
                    user_id=None)
    assert len(book_lines(payment_order_id=refunded.id)) == 2  # the file changes nothing in the books
    bank_before = balance(Account.BANK)
    _import(entry_xml("refund-line-1", False, amount, BOOKED, end_to_end_id=end_to_end_id(refunded.id)))
    vat = _vat(refunded)  # the credit note's VAT, made due by the sale's payment, is pending again
    assert _lines(refunded.id, "refund") == [("473", amount, 0), ("512", 0, amount), ("44571", vat, 0),
                                             ("44574", 0, vat)]
    assert balance(Account.BANK) == bank_before - amount and balance(Account.PAYMENTS_IN_TRANSIT) == 0
    assert books_breaches() == []


def test_an_unmatched_line_waits_in_471_and_leaves_it_when_matched_by_hand():
    order = collected(PaymentMethod.BANK_TRANSFER)
    answer = _import(credit(order, by_number=True, amount=order.amount_cents + 1),  # too much: waits
                     entry_xml("unknown-debit", False, 1_234, BOOKED))
    assert answer.unmatched == 2
    assert balance(Account.SUSPENSE) == -(order.amount_cents + 1) + 1_234
    assert balance(Account.BANK) == order.amount_cents + 1 - 1_234  # 512 is what the bank moved
    waiting = statements.unmatched(page=1, page_size=10).items
    assert {(line.direction, line.amount_cents) for line in waiting} == {
        ("credit", order.amount_cents + 1), ("debit", 1_234)}
    before = balance(Account.SUSPENSE)
    other = collected(PaymentMethod.BANK_TRANSFER)
    answer = _import(entry_xml("anonymous", True, other.amount_cents, BOOKED))
    [anonymous] = [line for line in statements.unmatched(page=1, page_size=10).items
                   if line.statement_id == answer.id]
    assert balance(Account.SUSPENSE) == before - other.amount_cents
    statements.match_line(anonymous.id, payment_order_id=other.id, user_id=None)
    assert _lines(other.id, "collection") == [("471", other.amount_cents, 0), ("411", 0, other.amount_cents),
                                              ("44574", _vat(other), 0), ("44571", 0, _vat(other))]
    assert balance(Account.SUSPENSE) == before
    assert books_breaches() == []



def test_a_return_that_waited_in_471_is_matched_by_hand_from_471():
    order = collected()  # a debit, never in a file: a return the bank books first cannot match it
    waiting = _import(returned(order, "MD06"))
    assert waiting.unmatched == 1 and balance(Account.SUSPENSE) == order.amount_cents
    _import(credit(order))  # the debit's credit, booked after
    [line] = statements.unmatched(page=1, page_size=10).items
    statements.match_line(line.id, payment_order_id=order.id, user_id=None)
    assert _lines(order.id, "returned_debit") == [("411", order.amount_cents, 0), ("471", 0, order.amount_cents),
                                                  ("44571", _vat(order), 0), ("44574", 0, _vat(order))]
    assert balance(Account.SUSPENSE) == 0 and balance(Account.BANK) == 0
    assert balance(Account.CUSTOMERS, Organization.get_by_id(order.organization_id).siren) == order.amount_cents
    assert books_breaches() == []
