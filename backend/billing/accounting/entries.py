"""Writing entries: one balanced entry per financial event, in one statement with its lines.

An `Entry` is what a posting knows: its journal, the event, its date (the event's day in
Europe/Paris), its piece (the invoice or payment order, with their ids), its label and its
lines. `post` writes entries and their lines in one statement; `entries_fragment` and
`entries_values` give that statement's SQL and values to a caller sending it as a part of its own
statement (the collection, migration 140's docstring says why the piece may be unknown then).

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

from backend import prepared
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
                  "invoice_id", "payment_order_id", "total")
_LINE_COLUMNS = ("entry_id", "line_no", "account", "aux_account", "aux_label", "label", "debit_cents", "credit_cents",
                 "letter_group")


@functools.lru_cache(maxsize=64)
def entries_fragment(line_counts: tuple[int, ...], *, when: str | None = None, prefix: str = "books",
                     letter_own: bool = False) -> prepared.Fragment:
    """The `WITH` parts (`<prefix>_entries`, `<prefix>_lines`) writing entries of `line_counts`
    lines each (values: `entries_values`), for a caller's own statement; written only `when` that
    SQL condition (with no values of its own) holds. `letter_own`: also `<prefix>_lettering`
    (`own_lettering_fragment`)."""
    entry_rows = ", ".join(
        "(" + ", ".join(f"%({prefix}_{n}_{column})s" for column in _ENTRY_COLUMNS) + ")"
        for n in range(len(line_counts)))
    line_rows = ", ".join(
        "(" + ", ".join(f"%({prefix}_{n}_{k}_{column})s" for column in _LINE_COLUMNS) + ")"
        for n, count in enumerate(line_counts) for k in range(count))
    condition = f" AND ({when})" if when else ""
    # constants and placeholders only
    return prepared.Fragment(
        f"{prefix}_entries AS (INSERT INTO accounting_entry (id, journal_code, fiscal_year, entry_date, piece_ref,"  # noqa: S608
        " piece_date, label, event, reservation_id, invoice_id, payment_order_id)"
        " SELECT v.id, v.journal_code, accounting_fiscal_year(d.day, %(books_fy_month)s, %(books_fy_day)s), d.day,"
        " v.piece_ref, v.piece_date::date, v.label, v.event, v.reservation_id, v.invoice_id, v.payment_order_id"
        f" FROM (VALUES {entry_rows}) AS v ({', '.join(_ENTRY_COLUMNS)})"
        " CROSS JOIN LATERAL (SELECT greatest(v.day::date, accounting_first_open_day()) AS day) AS d"
        f" WHERE v.total::bigint > 0{condition} RETURNING id, entry_date),"
        f" {prefix}_lines AS (INSERT INTO accounting_line ({', '.join(_LINE_COLUMNS)})"
        " SELECT v.entry_id, v.line_no::smallint, v.account, v.aux_account, v.aux_label, v.label,"
        " v.debit_cents::bigint, v.credit_cents::bigint, v.letter_group"
        f" FROM (VALUES {line_rows}) AS v ({', '.join(_LINE_COLUMNS)})"
        " WHERE v.debit_cents::bigint + v.credit_cents::bigint > 0"
        f" AND EXISTS (SELECT FROM {prefix}_entries e WHERE e.id = v.entry_id)"
        " RETURNING id, entry_id, account, aux_account, letter_group, debit_cents - credit_cents AS amount)"
        + (f", {own_lettering_fragment(prefix)}" if letter_own else "")
    )


def own_lettering_fragment(prefix: str) -> str:
    """The `WITH` parts lettering the lines `<prefix>_lines` wrote, for a piece no other line
    names yet (the collection's: the invoice it issues in the same transaction): each group (piece,
    account, auxiliary account) of them summing to zero, and of which no other line is visible, is
    lettered now, as the validation would letter it at the commit (migration 140: its entries are
    validated by that commit or not at all), its date the latest of their entries' dates, its code
    and id drawn as the validation draws them. The validation then finds these lines lettered and
    runs no lettering (migration 156): that work is done before the commit rather than while the
    invoice series' counter row is locked."""
    same_group = ("{a}.letter_group = {b}.letter_group AND {a}.account = {b}.account"
                  " AND {a}.aux_account IS NOT DISTINCT FROM {b}.aux_account")
    return (
        f"{prefix}_lettering AS (SELECT g.*, accounting_letter_code(nextval('accounting_lettering_id_seq')) AS code,"  # noqa: S608
        " nextval('accounting_lettering_id_seq') AS id FROM ("
        f" SELECT l.letter_group, l.account, l.aux_account, max(e.entry_date) AS day FROM {prefix}_lines l"
        f" JOIN {prefix}_entries e ON e.id = l.entry_id WHERE l.letter_group IS NOT NULL"
        # the statement's snapshot does not show its own lines: any line seen is another's
        " AND NOT EXISTS (SELECT FROM accounting_line o WHERE o.letter_group IS NOT NULL AND "
        + same_group.format(a="o", b="l") + ")"  # noqa: S608 (constants only)
        " GROUP BY l.letter_group, l.account, l.aux_account HAVING sum(l.amount) = 0) AS g),"
        f" {prefix}_letterings AS (INSERT INTO accounting_lettering (id, code, lettered_on)"
        f" SELECT id, code, day FROM {prefix}_lettering),"
        f" {prefix}_lettered AS (INSERT INTO accounting_lettered_line (line_id, lettering_id)"
        f" SELECT l.id, g.id FROM {prefix}_lines l JOIN {prefix}_lettering g ON "
        + same_group.format(a="l", b="g") + ")"
    )


def entries_values(entries: Sequence[Entry], *, prefix: str = "books") -> dict:
    """The values of `entries_fragment` for `entries` (of as many lines each)."""
    month, day = _fiscal_year_end
    params: dict = {"books_fy_month": month, "books_fy_day": day}
    for n, entry in enumerate(entries):
        params.update({
            f"{prefix}_{n}_id": entry.id, f"{prefix}_{n}_journal_code": Journal(entry.journal).value,
            f"{prefix}_{n}_day": entry.day, f"{prefix}_{n}_piece_ref": entry.piece_ref,
            f"{prefix}_{n}_piece_date": entry.piece_date, f"{prefix}_{n}_label": entry.label,
            f"{prefix}_{n}_event": entry.event, f"{prefix}_{n}_reservation_id": entry.reservation_id,
            f"{prefix}_{n}_invoice_id": entry.invoice_id, f"{prefix}_{n}_payment_order_id": entry.payment_order_id,
            f"{prefix}_{n}_total": entry.total_cents,
        })
        for k, line in enumerate(entry.lines):
            params.update({
                f"{prefix}_{n}_{k}_entry_id": entry.id, f"{prefix}_{n}_{k}_line_no": k + 1,
                f"{prefix}_{n}_{k}_account": Account(line.account).value,
                f"{prefix}_{n}_{k}_aux_account": line.party.siren if line.party else None,
                f"{prefix}_{n}_{k}_aux_label": line.party.name if line.party else None,
                f"{prefix}_{n}_{k}_label": entry.label, f"{prefix}_{n}_{k}_debit_cents": line.debit_cents,
                f"{prefix}_{n}_{k}_credit_cents": line.credit_cents,
                f"{prefix}_{n}_{k}_letter_group": line.letter_group,
            })
    return entries_fragment(tuple(len(entry.lines) for entry in entries), prefix=prefix).values(**params)


def post(*entries: Entry) -> list[str]:
    """Write `entries` with their lines in one statement, inside the caller's transaction; the ids
    of those written (an entry of zero is not)."""
    if not in_transaction():
        raise RuntimeError("entries are posted inside the transaction of the event they book")
    if not entries:
        return []
    fragment = entries_fragment(tuple(len(entry.lines) for entry in entries))
    sql = f"WITH {fragment} SELECT id FROM books_entries"  # noqa: S608
    return [row[0] for row in database.execute_sql(sql, entries_values(entries)).fetchall()]



