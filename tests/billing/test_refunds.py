"""Refunds (partial, total, over-refund) and credit notes of a collected sale."""

from __future__ import annotations

from dataclasses import replace

import pytest

from backend.billing import corrections
from backend.billing.accounting import ledger
from backend.billing.accounting.chart import Account
from backend.billing.collection import collect
from backend.billing.models import (
    AuditEntry,
    FinancialRecord,
    Invoice,
    PaymentMethod,
    PaymentOrder,
)
from backend.errors import Conflict, ValidationError
from tests.billing.accounting.books import book_lines
from tests.billing.bank.statements_data import booked
from tests.billing.helpers import Market, approved_org, booted_config


@pytest.fixture
def sale():
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    reservation = Market().reservation(industrial, distributor, price_cents=100_000)  # total 120 000 HT
    answer = collect.collect(reservation_id=reservation.id, industrial_organization_id=industrial.id,
                                method=PaymentMethod.BANK_TRANSFER, key="k", user_id=None,
                                config=booted_config())
    return Invoice.get(Invoice.number == answer.invoice_number), industrial, distributor


def _refund(invoice, amount, key="r-1", reason="Vitrine abîmée"):
    return corrections.refund_once(key=key, invoice_number=invoice.number, amount_cents=amount,
                                   reason=reason, method=PaymentMethod.BANK_TRANSFER, user_id=None,
                                   config=booted_config())


def _sums(reservation_id):
    out: dict[str, int] = {}
    for line in book_lines(reservation_id=reservation_id):
        out[line["account"]] = out.get(line["account"], 0) + line["debit_cents"] - line["credit_cents"]
    return out


def test_partial_then_total_refund(sale):
    invoice, *_ = sale
    first = _refund(invoice, 30_001, key="r-1")
    assert first.financial_status == "partially_refunded" and first.remaining_cents == 89_999
    assert first.amount_incl_tax_cents == 36_001  # 30 001 + 6 000.2 rounded half up
    note = Invoice.get(Invoice.number == first.credit_note_number)
    assert (note.kind, note.credited_invoice_id, note.amount_excl_tax_cents) == (
        "platform_credit_note", invoice.id, 30_001)
    assert note.number.startswith("AV-RES-")
    assert PaymentOrder.get_by_id(first.payment_order_id).kind == "refund"
    assert Invoice.get_by_id(invoice.id).status == "paid"
    second = _refund(invoice, 89_999, key="r-2")
    assert second.financial_status == "fully_refunded" and second.remaining_cents == 0
    assert Invoice.get_by_id(invoice.id).status == "credited"
    assert FinancialRecord.get_by_id(invoice.reservation_id).refunded_excl_tax_cents == 120_000
    # once the bank booked the collection and both refunds, every account is back to zero: the credit
    # notes and refunds sum exactly to what the collection booked
    booked(*PaymentOrder.select().where(PaymentOrder.reservation_id == invoice.reservation_id))
    assert set(_sums(invoice.reservation_id).values()) == {0}
    # the sale, its collection, the credit notes and their refunds lettered together once the bank
    # booked the collection (before, the sale's receivable stays open)
    receivable = [line for line in book_lines(reservation_id=invoice.reservation_id) if line["account"] == "411"]
    assert len(receivable) == 6 and all(line["letter"] for line in receivable)
    assert len({line["letter"] for line in receivable}) == 1
    audit = AuditEntry.select().where(AuditEntry.invoice_id == invoice.id, AuditEntry.action == "billing.refund")
    assert [a.reason for a in audit] == ["Vitrine abîmée", "Vitrine abîmée"]


def test_over_refund_is_409_and_writes_nothing(sale):
    invoice, *_ = sale
    _refund(invoice, 100_000)
    count = Invoice.select().count()
    with pytest.raises(Conflict) as refused:
        _refund(invoice, 20_001, key="r-2")
    assert refused.value.details == {"reason": "over_refund", "remainingCents": 20_000}
    assert Invoice.select().count() == count


def test_only_platform_sales_are_refundable_and_bad_amounts_are_refused(sale):
    invoice, *_ = sale
    note = Invoice.get(Invoice.number == _refund(invoice, 1_000).credit_note_number)
    with pytest.raises(Conflict):
        _refund(note, 10, key="r-2")
    with pytest.raises(ValidationError):
        _refund(invoice, 0, key="r-3")
    with pytest.raises(ValidationError):
        _refund(invoice, 10, key="r-4", reason="  ")


def test_refund_replay_with_the_same_key(sale):
    invoice, *_ = sale
    first = _refund(invoice, 500)
    again = _refund(invoice, 500)
    assert again == replace(first, idempotent=True)
    assert Invoice.select().where(Invoice.credited_invoice == invoice.id).count() == 1


def test_credit_note_credits_what_is_left_and_moves_no_money(sale):
    invoice, industrial, _ = sale
    _refund(invoice, 20_000)
    orders = PaymentOrder.select().count()
    answer = corrections.credit_in_full(invoice_number=invoice.number, reason="Erreur de prix", user_id=None,
                                          config=booted_config())
    assert answer.credited_cents == 100_000 and answer.invoice_status == "credited"
    assert PaymentOrder.select().count() == orders
    assert Invoice.get_by_id(invoice.id).status == "credited"
    # the customer is in credit for what the credit note credits (incl. VAT), once its payment was
    # received and until it is repaid
    booked(PaymentOrder.get(PaymentOrder.invoice == invoice.id, PaymentOrder.kind == "reservation_total"))
    assert ledger.balance(Account.CUSTOMERS, industrial.siren) == -120_000
    with pytest.raises(Conflict):
        corrections.credit_in_full(invoice_number=invoice.number, reason="encore", user_id=None, config=booted_config())
    repaid = _refund(invoice, 1, key="r-9")  # the customer's credit, repaid: no new credit note
    assert repaid.credit_note_number == answer.credit_note_number and repaid.remaining_cents == 99_999
    assert AuditEntry.get(AuditEntry.action == "billing.credit_note").reason == "Erreur de prix"
