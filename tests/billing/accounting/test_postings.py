"""Every financial event's entry (docs/accounting.md, "Postings"): its journal, its accounts and
sides, balanced; a sale of 1 000.00 EUR excluding tax at 20 % VAT, the store's share 800.00."""

from __future__ import annotations

from datetime import date

import pytest

from backend.billing.accounting import ledger
from backend.billing.accounting.entries import Party
from backend.billing.accounting.ledger import Piece

DAY = date(2026, 6, 15)
CUSTOMER, STORE = Party("552100554", "Client SAS"), Party("385347927", "Magasin SAS")
SALE = Piece("sale", "FAC-RES-2026-000001", DAY, CUSTOMER, 100_000, 20_000)
CREDIT_NOTE = Piece("cn", "AV-RES-2026-000001", DAY, CUSTOMER, 30_000, 6_000)
SELF_BILLED = Piece("sb", "FAC-SUP-385347927-2026-000001", DAY, STORE, 80_000, 16_000)
SUPPLIER_CN = Piece("scn", "AV-SUP-385347927-2026-000001", DAY, STORE, 20_000, 4_000)
LEGACY = Piece("dep", "FAC-DEP-385347927-2026-000001", DAY, CUSTOMER, 30_000, 6_000, reservation_id="r-1")
COMMISSION = Piece("com", "FAC-COM-2026-000001", DAY, STORE, 10_000, 2_000, reservation_id="r-1")
PAYMENT = {"payment_order_id": "po", "day": DAY}

CASES = [
    ("sale invoice", ledger.sale_invoice_entry(SALE), "VE",
     {("411", "D"): 120_000, ("706", "C"): 100_000, ("44571", "C"): 20_000}),
    ("customer credit note", ledger.customer_credit_note_entry(CREDIT_NOTE, credited_invoice_id="sale"), "VE",
     {("706", "D"): 30_000, ("44571", "D"): 6_000, ("411", "C"): 36_000}),
    ("returned debit", ledger.returned_debit_entry(SALE, amount_cents=120_000, **PAYMENT), "BQ",
     {("411", "D"): 120_000, ("512", "C"): 120_000}),
    ("self-billed invoice", ledger.self_billed_invoice_entry(SELF_BILLED), "AC",
     {("604", "D"): 80_000, ("44566", "D"): 16_000, ("401", "C"): 96_000}),
    ("supplier credit note", ledger.supplier_credit_note_entry(SUPPLIER_CN, credited_invoice_id="sb"), "AC",
     {("401", "D"): 24_000, ("604", "C"): 20_000, ("44566", "C"): 4_000}),
    ("distributor's debt deducted from a payout", ledger.debt_deduction_entry(
        SELF_BILLED, debt_invoice_id="old-sb", amount_cents=24_000, **PAYMENT), "OD",
     {("401", "D"): 24_000, ("401", "C"): 24_000}),
    ("legacy commission invoice", ledger.commission_entries(COMMISSION)[0], "VE",
     {("411", "D"): 12_000, ("706", "C"): 10_000, ("44571", "C"): 2_000}),
    ("legacy commission taken from the store's funds", ledger.commission_entries(COMMISSION)[1], "OD",
     {("467", "D"): 12_000, ("411", "C"): 12_000}),
]


@pytest.mark.parametrize(("event", "entry", "journal", "expected"), CASES, ids=[case[0] for case in CASES])
def test_each_event_posts_one_balanced_entry_on_the_right_accounts(event, entry, journal, expected):
    assert entry.journal == journal
    sides = {}
    for line in entry.lines:
        side, cents = ("D", line.debit_cents) if line.debit_cents else ("C", line.credit_cents)
        sides[(line.account.value, side)] = sides.get((line.account.value, side), 0) + cents
    assert sides == expected
    assert sum(line.debit_cents for line in entry.lines) == sum(line.credit_cents for line in entry.lines)
    third_party = [line for line in entry.lines if line.party is not None]
    assert third_party and all(line.letter_group and line.party.siren for line in third_party)
    assert entry.day == DAY and entry.label


def test_a_credit_note_letters_with_the_invoice_it_credits():
    credit_note = ledger.customer_credit_note_entry(CREDIT_NOTE, credited_invoice_id="sale")
    groups = {line.letter_group for entry in (ledger.sale_invoice_entry(SALE), credit_note)
              for line in entry.lines if line.party}
    assert groups == {"sale"}
