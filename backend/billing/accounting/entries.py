"""Writing entries: one balanced entry per financial event, in one statement with its lines.

An `Entry` is what a posting knows: its journal, the event, its date (the event's day in
Europe/Paris), its piece (the invoice or payment order, with their ids), its label and its
lines. `post` writes entries and their lines in one statement.

What the statement decides, so that every writer gets it the same way:
- the entry's date is the event's, or the first open day when that day lies in a closed period
  (`vitrine accounting close`), and its fiscal year follows (`ACCOUNTING_FISCAL_YEAR_END`);
- a line of zero is not written (a 0 % VAT line), nor an entry whose lines are all zero.

The database validates each entry when the transaction commits (migration 140): balanced,
numbered in its journal and fiscal year, piece filled in, third-party lines lettered.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from zoneinfo import ZoneInfo

from backend.billing.accounting.chart import THIRD_PARTY_ACCOUNTS, Account, Journal
from backend.db import database, in_transaction
from backend.model import new_id

PARIS = ZoneInfo("Europe/Paris")
_fiscal_year_end = (12, 31)


def use_fiscal_year_end(month_day: str) -> None:
    """`ACCOUNTING_FISCAL_YEAR_END` (`MM-DD`, checked by the configuration), applied once at boot."""
    global _fiscal_year_end
    month, day = (int(part) for part in month_day.split("-"))
    _fiscal_year_end = (month, day)


def fiscal_year_bounds(year: int) -> tuple[date, date]:
    """The first and last day of fiscal year `year` (the year of its closing date)."""
    month, day = _fiscal_year_end
    end = date(year, month, day)
    previous = date(year - 1, month, day)
    return date.fromordinal(previous.toordinal() + 1), end


def paris_day(moment: datetime) -> date:
    return moment.astimezone(PARIS).date()


@dataclass(frozen=True)
class Party:
    """An auxiliary account: the organization's SIREN and its legal name."""

    siren: str
    name: str


@dataclass(frozen=True)
class Line:
    account: Account
    debit_cents: int = 0
    credit_cents: int = 0
    party: Party | None = None
    letter_group: str | None = None  # the invoice the receivable or payable line belongs to

    def __post_init__(self) -> None:
        if min(self.debit_cents, self.credit_cents) < 0 or (self.debit_cents and self.credit_cents):
            raise ValueError(f"a line is a debit or a credit of a positive amount: {self}")
        if (Account(self.account) in THIRD_PARTY_ACCOUNTS) != (self.party is not None):
            raise ValueError(f"a third-party account, and only one, names its party: {self}")


class UnbalancedEntry(ValueError):
    pass


@dataclass(frozen=True)
class Entry:
    journal: Journal
    event: str
    day: date
    label: str
    lines: tuple[Line, ...]
    piece_ref: str | None = None  # None: the invoice's number, filled in on validation
    piece_date: date | None = None
    invoice_id: str | None = None
    payment_order_id: str | None = None
    reservation_id: str | None = None
    bank_line_id: str | None = None  # the statement line it books, when the bank moved money
    id: str = field(default_factory=new_id)

    def __post_init__(self) -> None:
        debits = sum(line.debit_cents for line in self.lines)
        credits = sum(line.credit_cents for line in self.lines)
        if debits != credits:
            raise UnbalancedEntry(f"entry {self.label!r} does not balance: debits {debits}, credits {credits}")

    @property
    def total_cents(self) -> int:
        return sum(line.debit_cents for line in self.lines)


_ENTRY_COLUMNS = ("id", "journal_code", "day", "piece_ref", "piece_date", "label", "event", "reservation_id",
                  "invoice_id", "payment_order_id", "bank_line_id", "total")
_LINE_COLUMNS = ("entry_id", "line_no", "account", "aux_account", "aux_label", "label", "debit_cents", "credit_cents",
                 "letter_group")


@functools.lru_cache(maxsize=64)
def _insert_sql(line_counts: tuple[int, ...]) -> str:
    """The statement writing entries of `line_counts` lines each (values: `_values`), returning
    the ids of the entries written."""
    entry_rows = ", ".join(
        "(" + ", ".join(f"%(e{n}_{column})s" for column in _ENTRY_COLUMNS) + ")" for n in range(len(line_counts)))
    line_rows = ", ".join(
        "(" + ", ".join(f"%(e{n}_{k}_{column})s" for column in _LINE_COLUMNS) + ")"
        for n, count in enumerate(line_counts) for k in range(count))
    # constants and placeholders only
    return (
        "WITH written AS (INSERT INTO accounting_entry (id, journal_code, fiscal_year, entry_date, piece_ref,"  # noqa: S608
        " piece_date, label, event, reservation_id, invoice_id, payment_order_id, bank_line_id)"
        " SELECT v.id, v.journal_code, accounting_fiscal_year(d.day, %(fy_month)s, %(fy_day)s), d.day,"
        " v.piece_ref, v.piece_date::date, v.label, v.event, v.reservation_id, v.invoice_id, v.payment_order_id,"
        " v.bank_line_id"
        f" FROM (VALUES {entry_rows}) AS v ({', '.join(_ENTRY_COLUMNS)})"
        " CROSS JOIN LATERAL (SELECT greatest(v.day::date, accounting_first_open_day()) AS day) AS d"
        " WHERE v.total::bigint > 0 RETURNING id),"
        f" lines AS (INSERT INTO accounting_line ({', '.join(_LINE_COLUMNS)})"
        " SELECT v.entry_id, v.line_no::smallint, v.account, v.aux_account, v.aux_label, v.label,"
        " v.debit_cents::bigint, v.credit_cents::bigint, v.letter_group"
        f" FROM (VALUES {line_rows}) AS v ({', '.join(_LINE_COLUMNS)})"
        " WHERE v.debit_cents::bigint + v.credit_cents::bigint > 0"
        " AND EXISTS (SELECT FROM written e WHERE e.id = v.entry_id))"
        " SELECT id FROM written"
    )


def _values(entries: Sequence[Entry]) -> dict:
    """The values of `_insert_sql` for `entries` (of as many lines each)."""
    month, day = _fiscal_year_end
    params: dict = {"fy_month": month, "fy_day": day}
    for n, entry in enumerate(entries):
        params.update({
            f"e{n}_id": entry.id, f"e{n}_journal_code": Journal(entry.journal).value, f"e{n}_day": entry.day,
            f"e{n}_piece_ref": entry.piece_ref, f"e{n}_piece_date": entry.piece_date, f"e{n}_label": entry.label,
            f"e{n}_event": entry.event, f"e{n}_reservation_id": entry.reservation_id,
            f"e{n}_invoice_id": entry.invoice_id, f"e{n}_payment_order_id": entry.payment_order_id,
            f"e{n}_bank_line_id": entry.bank_line_id,
            f"e{n}_total": entry.total_cents,
        })
        for k, line in enumerate(entry.lines):
            params.update({
                f"e{n}_{k}_entry_id": entry.id, f"e{n}_{k}_line_no": k + 1,
                f"e{n}_{k}_account": Account(line.account).value,
                f"e{n}_{k}_aux_account": line.party.siren if line.party else None,
                f"e{n}_{k}_aux_label": line.party.name if line.party else None,
                f"e{n}_{k}_label": entry.label, f"e{n}_{k}_debit_cents": line.debit_cents,
                f"e{n}_{k}_credit_cents": line.credit_cents, f"e{n}_{k}_letter_group": line.letter_group,
            })
    return params


def post(*entries: Entry) -> list[str]:
    """Write `entries` with their lines in one statement, inside the caller's transaction; the ids
    of those written (an entry of zero is not)."""
    if not in_transaction():
        raise RuntimeError("entries are posted inside the transaction of the event they book")
    if not entries:
        return []
    sql = _insert_sql(tuple(len(entry.lines) for entry in entries))
    return [row[0] for row in database.execute_sql(sql, _values(entries)).fetchall()]
