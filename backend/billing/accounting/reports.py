"""Reading the books: the trial balance and an account's ledger over a period (entry dates,
both days included), over validated entries only."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from backend.billing.accounting.chart import Account, account_label
from backend.db import database
from backend.errors import ValidationError


@dataclass(frozen=True)
class AccountTotal:
    account: str
    label: str
    debit_cents: int
    credit_cents: int

    @property
    def balance_cents(self) -> int:
        return self.debit_cents - self.credit_cents


@dataclass(frozen=True)
class TrialBalance:
    accounts: list[AccountTotal]
    totals: AccountTotal


@dataclass(frozen=True)
class LedgerLine:
    entry_number: str
    journal: str
    entry_date: date
    piece_ref: str
    label: str
    aux_account: str | None
    aux_label: str | None
    debit_cents: int
    credit_cents: int
    letter: str | None


def _period(start: date | None, end: date | None) -> tuple[date, date]:
    start, end = start or date.min, end or date.max
    if start > end:
        raise ValidationError("`from` is after `to`", fields={"from": ["after to"]})
    return start, end


def trial_balance(*, start: date | None = None, end: date | None = None) -> TrialBalance:
    """Each account's debits and credits over the period, in account order, and their totals
    (total debits equal total credits: every entry balances)."""
    start, end = _period(start, end)
    rows = database.execute_sql(
        "SELECT l.account, sum(l.debit_cents), sum(l.credit_cents) FROM accounting_line l"
        " JOIN accounting_entry e ON e.id = l.entry_id"
        " WHERE e.number IS NOT NULL AND e.entry_date BETWEEN %s AND %s GROUP BY l.account ORDER BY l.account",
        (start, end)).fetchall()
    accounts = [AccountTotal(account, account_label(account), int(debit), int(credit))
                for account, debit, credit in rows]
    totals = AccountTotal("", "Total", sum(a.debit_cents for a in accounts), sum(a.credit_cents for a in accounts))
    return TrialBalance(accounts, totals)


def account_ledger(account: str, *, start: date | None = None, end: date | None = None) -> list[LedgerLine]:
    """The lines of one account (of the chart: 400 otherwise) over the period, in date then
    validation order."""
    try:
        number = Account(account)
    except ValueError:
        raise ValidationError(f"{account!r} is not an account of the chart",
                              fields={"account": ["unknown account"]}) from None
    start, end = _period(start, end)
    rows = database.execute_sql(
        "SELECT e.journal_code || '-' || lpad(e.number::text, 6, '0'), e.journal_code, e.entry_date, e.piece_ref,"
        " l.label, l.aux_account, l.aux_label, l.debit_cents, l.credit_cents, lt.code"
        " FROM accounting_line l JOIN accounting_entry e ON e.id = l.entry_id"
        " LEFT JOIN accounting_lettered_line ll ON ll.line_id = l.id"
        " LEFT JOIN accounting_lettering lt ON lt.id = ll.lettering_id"
        " WHERE l.account = %s AND e.number IS NOT NULL AND e.entry_date BETWEEN %s AND %s"
        " ORDER BY e.entry_date, e.validation_seq, l.line_no", (number.value, start, end)).fetchall()
    return [LedgerLine(*row) for row in rows]
