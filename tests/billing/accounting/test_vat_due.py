"""VAT on services when it is due (docs/accounting.md, "VAT on services: when it is due"): pending
at issue, moved to `44571` / `44566` as the bank books the money (a part moves its share, the last
part the rest), back by a return or a refund; due at issue for a seller that opted for debits. And
the two stages the bank can take back: a debit returned before a statement credited it, a debit
whose file was voided. Entry lines asserted."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from backend import clock
from backend.billing import payouts
from backend.billing.accounting import cash, entries, ledger, reconciliation, vat_due
from backend.billing.accounting.chart import Account
from backend.billing.accounting.entries import Party, paris_day
from backend.billing.accounting.ledger import Piece, balance
from backend.billing.accounting.vat_due import share
from backend.billing.bank import files, statements, waiting
from backend.billing.collection import collect
from backend.billing.models import BankFileKind, Invoice, PaymentKind, PaymentMethod, PaymentOrder
from backend.billing.self_billing import scheduler
from backend.billing.vat import vat_amount_cents
from backend.money import round_half_up_div
from backend.runtime import current_runtime
from ops.simulators.bank_store import entry_xml
from tests.billing.accounting.books import book_lines
from tests.billing.bank.data import bank_config
from tests.billing.bank.statements_data import (
    DAY,
    booked,
    books_breaches,
    collected,
    config,
    credit,
    number_of,
    returned,
    statement,
)
from tests.billing.helpers import Market, approved_org, booted_config, customer_paid
from tests.billing.self_billing.data import AFTER, sign_mandate
from tests.billing.self_billing.data import collected as self_billing_collected


@given(pending=st.integers(0, 1_000_000), owed=st.integers(1, 10_000_000),
       cuts=st.lists(st.integers(1, 99), max_size=6))
def test_the_parts_of_a_payment_move_exactly_the_pending_vat_each_its_share(pending, owed, cuts):
    points = sorted({owed * cut // 100 for cut in cuts} - {0, owed})
    parts = [b - a for a, b in zip([0, *points], [*points, owed], strict=True)]
    left_vat, left_owed = pending, owed
    for part in parts:
        moved = share(left_vat, part, left_owed)
        assert 0 <= moved <= left_vat
        assert abs(moved * left_owed - left_vat * part) * 2 <= left_owed  # half a cent of its exact share at most
        left_vat, left_owed = left_vat - moved, left_owed - part
    assert (left_vat, left_owed) == (0, 0)  # the last part takes the rest: the whole VAT moved


def test_money_paid_back_moves_vat_back_and_a_payment_of_all_that_is_left_moves_all():
    assert share(-60, -360, -360) == -60 and share(-60, -120, -360) == -20  # a refund: back to pending
    assert share(140, -360, 840) == -60  # a refund booked before the debit it refunds: pending again
    assert share(0, 1_000, 0) == 0 and share(200, 1_200, 1_200) == 200


def _vat(order: PaymentOrder) -> int:
    return order.amount_cents - Invoice.get_by_id(order.invoice_id).amount_excl_tax_cents


def _lines(**where) -> list[tuple]:
    return [(line["account"], line["debit_cents"], line["credit_cents"]) for line in book_lines(**where)]


def _import(*entries: str):
    return statements.import_statement(statement(*entries), config=config(), user_id=None)


def test_a_sale_paid_in_two_parts_moves_its_share_then_the_rest_of_its_vat():
    order = collected(PaymentMethod.BANK_TRANSFER)
    amount, vat = order.amount_cents, _vat(order)
    assert _lines(invoice_id=order.invoice_id, event="sale_invoice")[2] == ("44574", 0, vat)  # pending at issue
    first = amount // 3
    _import(entry_xml("part-1", True, first, DAY, name="Fromagerie"), entry_xml("part-2", True, amount - first, DAY))
    [one, two] = sorted(statements.unmatched(page=1, page_size=10).items, key=lambda line: line.entry_key)
    waiting.resolve_line(one.id, how=waiting.APPLIED, note="premier tiers", user_id=None,
                         invoice_number=number_of(order))
    share_of_first = round_half_up_div(vat * first, amount)
    assert _lines(event=cash.APPLIED_EVENT) == [("471", first, 0), ("411", 0, first), ("44574", share_of_first, 0),
                                                ("44571", 0, share_of_first)]
    assert balance(Account.VAT_COLLECTED) == -share_of_first
    waiting.resolve_line(two.id, how=waiting.APPLIED, note="le reste", user_id=None, invoice_number=number_of(order))
    assert balance(Account.VAT_COLLECTED) == -vat and balance(Account.VAT_COLLECTED_PENDING) == 0  # exactly its VAT
    assert [line["letter"] is not None for line in book_lines(invoice_id=order.invoice_id)
            if line["account"] == "44574"] == [True]  # the pending VAT lettered, all of it moved
    assert books_breaches() == []


def test_a_returned_debit_moves_back_all_the_vat_its_collection_made_due():
    order = collected()
    booked(order)
    vat = _vat(order)
    assert balance(Account.VAT_COLLECTED) == -vat
    _import(returned(order, "AM04"))
    assert _lines(payment_order_id=order.id, event="returned_debit")[2:] == [("44571", vat, 0), ("44574", 0, vat)]
    assert balance(Account.VAT_COLLECTED) == 0 and balance(Account.VAT_COLLECTED_PENDING) == -vat
    assert books_breaches() == []


def test_a_seller_that_opted_for_debits_owes_the_vat_at_issue_and_its_payment_moves_none():
    industrial = approved_org("industrial")
    on_debits = dataclasses.replace(booted_config(), platform_vat_on_debits=True)
    reservation = Market().reservation(industrial, approved_org("distributor"))
    answer = collect.collect(reservation_id=reservation.id, industrial_organization_id=industrial.id,
                             method=PaymentMethod.BANK_TRANSFER, key=f"k-{reservation.id}", user_id=None,
                             config=on_debits)
    order = PaymentOrder.get_by_id(answer.payment_order_id)
    vat = _vat(order)
    assert _lines(invoice_id=order.invoice_id, event="sale_invoice")[2] == ("44571", 0, vat)
    _import(credit(order, by_number=True))
    assert _lines(payment_order_id=order.id, event="collection") == [("512", order.amount_cents, 0),
                                                                     ("411", 0, order.amount_cents)]
    assert balance(Account.VAT_COLLECTED) == -vat and balance(Account.VAT_COLLECTED_PENDING) == 0


def test_the_deductible_vat_of_a_self_billed_invoice_is_deductible_when_the_bank_books_its_payout():
    distributor = approved_org("distributor")
    sign_mandate(distributor)
    reservation = self_billing_collected(Market(), approved_org("industrial"), distributor)
    customer_paid(reservation.id)
    with clock.frozen_at(AFTER):
        assert scheduler.self_bill_due_reservations(config=booted_config())["issued"] == 1
    invoice = Invoice.get(Invoice.reservation_id == reservation.id, Invoice.kind == "supplier_self_billed")
    vat = vat_amount_cents(invoice.amount_excl_tax_cents, invoice.vat_rate_bps)
    assert ("44564", vat, 0) in _lines(invoice_id=invoice.id, event="self_billed_invoice")
    assert balance(Account.VAT_DEDUCTIBLE) == 0
    payout = payouts.pay_out(reservation_id=reservation.id, key="payout-vat", user_id=None, reason="test")
    order = PaymentOrder.get_by_id(payout.payment_order_id)
    booked(order)
    assert _lines(payment_order_id=order.id, event="payout") == [("473", order.amount_cents, 0),
                                                                 ("512", 0, order.amount_cents),
                                                                 ("44566", vat, 0), ("44564", 0, vat)]
    assert balance(Account.VAT_DEDUCTIBLE) == vat and balance(Account.VAT_DEDUCTIBLE_PENDING) == 0


def _make_debit_file():
    return files.make_file(BankFileKind.DIRECT_DEBIT, storage=current_runtime().storage, config=bank_config(),
                           user_id=None).file


def test_a_debit_returned_before_a_statement_credited_it_leaves_511_and_its_credit_meets_it_in_471():
    order = collected()
    amount = order.amount_cents
    _make_debit_file()
    assert balance(Account.RECEIPTS_IN_TRANSIT) == amount
    answer = _import(returned(order, "AC04"), credit(order))  # the return first: the credit finds it returned
    assert (answer.returned, answer.unmatched) == (1, 1)
    assert _lines(payment_order_id=order.id, event="returned_debit") == [
        ("411", amount, 0), ("511", 0, amount), ("471", amount, 0), ("512", 0, amount)]
    assert balance(Account.RECEIPTS_IN_TRANSIT) == 0 and balance(Account.SUSPENSE) == 0
    assert balance(Account.BANK) == 0 and balance(Account.VAT_COLLECTED) == 0  # no money kept, no VAT due
    assert books_breaches() == []


def test_a_voided_files_debits_go_back_to_411_and_the_next_file_hands_them_to_the_bank_again():
    order = collected()
    amount = order.amount_cents
    refused = _make_debit_file()
    files.void_file(refused.id, reason="refusé par la banque", user_id=None, origin="test")
    assert _lines(payment_order_id=order.id) == [("511", amount, 0), ("411", 0, amount),  # in the file
                                                 ("411", amount, 0), ("511", 0, amount)]  # taken back
    assert balance(Account.RECEIPTS_IN_TRANSIT) == 0
    assert reconciliation.reconcile(paris_day(clock.now())).items == []  # nothing in transit any more
    _make_debit_file()
    assert _lines(payment_order_id=order.id, event=cash.IN_TRANSIT)[2:] == [("511", amount, 0), ("411", 0, amount)]
    assert [(item.kind, item.amount_cents) for item in reconciliation.reconcile(paris_day(clock.now())).items] == [
        ("receipt_in_transit", amount)]
    _import(credit(order))
    assert _lines(payment_order_id=order.id, event="collection")[:2] == [("512", amount, 0), ("511", 0, amount)]
    assert balance(Account.RECEIPTS_IN_TRANSIT) == 0 and balance(Account.BANK) == amount
    assert books_breaches() == []


def test_a_debt_deducted_from_a_payout_settles_the_vat_of_both_invoices():
    """Compensation is payment: the share of the new invoice's deductible VAT it pays becomes
    deductible, and the VAT the debt's credit note took back leaves `44566`."""
    store, day = Party("385347927", "Magasin SAS"), paris_day(clock.now())
    paid, owed = (Piece(None, f"FAC-SUP-385347927-2026-99999{n}", day, store, 80_000, 16_000, vat_at_issue=False)
                  for n in (1, 2))
    paid, owed = dataclasses.replace(paid, invoice_id="sb-paid"), dataclasses.replace(owed, invoice_id="sb-owed")
    payout = cash.Payment("po", PaymentKind.SUPPLIER_PAYOUT, 96_000, paid, Account.SUPPLIERS, store, "sb-paid", False)
    note = Piece(None, "AV-SUP-385347927-2026-999991", day, store, 20_000, 4_000, vat_at_issue=False)

    def post(entry):
        entries.post(dataclasses.replace(entry, invoice_id=None, payment_order_id=None, bank_line_id=None))

    post(ledger.self_billed_invoice_entry(paid))
    post(cash.stage_entry(payout, cash.Stage.BOOKED, day=day,
                          vat=tuple(vat_due.Positions(["sb-paid"], purchase=True).paid("sb-paid", 96_000))))
    post(ledger.supplier_credit_note_entry(note, credited_invoice_id="sb-paid"))  # after the payout: a debt
    post(ledger.self_billed_invoice_entry(owed))
    ledger.post_debt_deduction(owed, debt_invoice_id="sb-paid", amount_cents=24_000, payment_order_id=None, day=day)
    assert _lines(event="debt_deduction") == [("401", 24_000, 0), ("401", 0, 24_000),
                                              ("44566", 4_000, 0), ("44564", 0, 4_000),  # a quarter of the new one
                                              ("44564", 4_000, 0), ("44566", 0, 4_000)]  # the credit note's back
    assert balance(Account.VAT_DEDUCTIBLE) == 16_000 + 4_000 - 4_000  # the payout, the share, the debt
    assert balance(Account.VAT_DEDUCTIBLE_PENDING) == 16_000 - 4_000  # the new invoice's rest, until its payout
