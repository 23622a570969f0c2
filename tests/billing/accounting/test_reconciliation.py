"""The bank reconciliation after each kind of difference, and zero once every item is explained;
the waiting lines settled otherwise (refunded, applied); `vitrine accounting verify` naming the
statement where `512` and the bank part, for a statement imported past the application."""

from __future__ import annotations

import uuid

import pytest

from backend import clock
from backend.billing.accounting import reconciliation
from backend.billing.accounting.chart import Account
from backend.billing.accounting.entries import paris_day
from backend.billing.accounting.ledger import balance
from backend.billing.bank import files, statements, waiting
from backend.billing.models import BankFileKind, PaymentMethod
from backend.db import database
from backend.errors import Conflict
from backend.identity.models import Organization
from backend.runtime import current_runtime
from ops.simulators.bank_store import entry_xml
from tests.billing.bank.data import bank_config, sign_sepa_mandate
from tests.billing.bank.statements_data import (
    DAY,
    books_breaches,
    collected,
    config,
    credit,
    number_of,
    statement,
)
from tests.billing.helpers import approved_org

TODAY = paris_day(clock.now())


def _import(*entries: str):
    return statements.import_statement(statement(*entries), config=config(), user_id=None)


def _siren(order) -> str:
    return Organization.get_by_id(order.organization_id).siren


def _kinds(report) -> list[tuple[str, int]]:
    return sorted((item.kind, item.amount_cents) for item in report.items)


def test_the_reconciliation_names_each_item_and_closes_to_zero_once_each_is_explained():
    industrial = approved_org("industrial")
    sign_sepa_mandate(industrial)
    debit = collected(industrial=industrial)
    unpaid, twice = collected(PaymentMethod.BANK_TRANSFER), collected(PaymentMethod.BANK_TRANSFER)
    files.make_file(BankFileKind.DIRECT_DEBIT, storage=current_runtime().storage, config=bank_config(), user_id=None)
    report = reconciliation.reconcile(TODAY)
    assert (report.bank_balance_cents, report.book_balance_cents, report.difference_cents) == (0, 0, 0)
    assert _kinds(report) == [("receipt_in_transit", debit.amount_cents)]  # in the bank's hands, not booked yet
    # the debit booked, a transfer paid twice, an unknown payer; the unpaid transfer never comes
    _import(credit(debit), credit(twice, by_number=True), credit(twice, by_number=True),
            entry_xml("unknown-payer", True, 12_345, DAY, name="Inconnu"))
    report = reconciliation.reconcile(TODAY)
    received = debit.amount_cents + 2 * twice.amount_cents + 12_345
    assert (report.bank_balance_cents, report.book_balance_cents, report.difference_cents) == (received, received, 0)
    assert _kinds(report) == sorted([("waiting_line", twice.amount_cents), ("waiting_line", 12_345)])
    assert all(item.age_days == (TODAY - DAY).days for item in report.items) and report.unexplained_cents == 0
    assert balance(Account.CUSTOMERS, _siren(unpaid)) == unpaid.amount_cents  # still owed, not cash
    # the admin explains both lines: the double payment refunded, the unknown payer applied to the unpaid sale
    lines = {line.amount_cents: line for line in statements.unmatched(page=1, page_size=10).items}
    applied = waiting.resolve_line(lines[12_345].id, how="applied", invoice_number=number_of(unpaid),
                                   note="the customer paid part of it without a reference", user_id=None)
    assert applied.invoice_number == number_of(unpaid)
    paid_back = _import(entry_xml("refund-of-double", False, twice.amount_cents, DAY, name="Client"))
    [back] = [line for line in statements.unmatched(page=1, page_size=10).items
              if line.statement_id == paid_back.id]
    waiting.resolve_line(lines[twice.amount_cents].id, how="refunded", other_line_id=back.id,
                         note="paid back from the bank's portal", user_id=None)
    report = reconciliation.reconcile(TODAY)
    assert report.items == [] and report.difference_cents == 0
    assert report.bank_balance_cents == report.book_balance_cents == received - twice.amount_cents
    assert statements.unmatched(page=1, page_size=10).total == 0 and balance(Account.SUSPENSE) == 0
    assert balance(Account.CUSTOMERS, _siren(unpaid)) == unpaid.amount_cents - 12_345
    with pytest.raises(Conflict) as again:
        waiting.resolve_line(lines[12_345].id, how="applied", invoice_number=number_of(unpaid), note="x",
                             user_id=None)
    assert again.value.details["reason"] == "line_matched"
    assert books_breaches() == []
    assert "Écart (banque - comptabilité)" in reconciliation.as_html(report, company="Vitrine SAS")


def test_a_balance_before_the_first_statement_explains_the_difference():
    order = collected(PaymentMethod.BANK_TRANSFER)
    statements.import_statement(statement(credit(order, by_number=True), opening=50_000), config=config(),
                                user_id=None)
    report = reconciliation.reconcile(TODAY)
    assert report.difference_cents == 50_000 and report.unexplained_cents == 0
    assert _kinds(report) == [("opening_balance", 50_000)]


@pytest.mark.owner  # the statement is written as the database owner would, past the application
def test_verify_names_the_statement_imported_past_the_application():
    order = collected(PaymentMethod.BANK_TRANSFER)
    _import(credit(order, by_number=True))
    assert books_breaches() == []
    statement_id, line_id = str(uuid.uuid4()), str(uuid.uuid4())
    database.execute_sql(
        "INSERT INTO billing_bank_statement (id, kind, message_id, statement_id, account_iban, document_sha256,"
        " line_count, matched, returned, unmatched, created_at, opening_balance_cents, closing_balance_cents,"
        " closing_date) VALUES (%s, 'camt.053', 'M-OWNER', 'S-OWNER', %s, repeat('0', 64), 1, 0, 0, 1,"
        " now() + interval '1 minute', 0, 0, %s)", (statement_id, config().platform_legal_iban, DAY))
    database.execute_sql(
        "INSERT INTO billing_bank_line (id, statement_id, account_iban, entry_key, direction, amount_cents,"
        " booking_date, state, created_at) VALUES (%s, %s, %s, 'OWNER-1', 'debit', 777, %s, 'unmatched', now())",
        (line_id, statement_id, config().platform_legal_iban, DAY))
    breaches = books_breaches()
    assert any(breach.startswith("bank differs from books: statement S-OWNER ") for breach in breaches), breaches
    report = reconciliation.reconcile(TODAY)
    assert ("line_not_posted", -777) in _kinds(report) and report.difference_cents == -777
    assert report.unexplained_cents == 0

