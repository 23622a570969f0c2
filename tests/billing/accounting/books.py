"""Reading the books in a test: the entries written so far validated at once (numbered and
lettered as at commit), their lines summed per account, auxiliary account and side."""

from __future__ import annotations

from collections import Counter

from backend.db import database

_FILTERS = {"reservation_id", "invoice_id", "payment_order_id", "event", "journal_code"}


def book_lines(**where: str) -> list[dict]:
    """The lines of the entries matching `where` (entry columns), validated first, in posting order."""
    validate_now()
    assert set(where) <= _FILTERS, where
    clause = " AND ".join(f"e.{column} = %({column})s" for column in where) or "true"
    cursor = database.execute_sql(
        "SELECT e.journal_code, e.number, e.event, e.piece_ref, l.account, l.aux_account, l.debit_cents,"  # noqa: S608
        " l.credit_cents, l.letter_group, lt.code AS letter FROM accounting_entry e"
        " JOIN accounting_line l ON l.entry_id = e.id"
        " LEFT JOIN accounting_lettered_line ll ON ll.line_id = l.id"
        " LEFT JOIN accounting_lettering lt ON lt.id = ll.lettering_id"
        f" WHERE {clause} ORDER BY e.validation_seq, l.line_no", where)
    names = [column.name for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def book_totals(**where: str) -> dict[tuple[str, str], int]:
    """`{(account, "debit" | "credit"): cents}` over the matching entries' lines."""
    totals: Counter = Counter()
    for line in book_lines(**where):
        side, amount = ("debit", line["debit_cents"]) if line["debit_cents"] else ("credit", line["credit_cents"])
        totals[(line["account"], side)] += amount
    return dict(totals)


def validate_now() -> None:
    """Validate the entries written so far in this transaction, and each later one at the end of
    its statement, rather than at the commit (numbers and lettering readable before it)."""
    database.execute_sql("SET CONSTRAINTS accounting_entry_validate IMMEDIATE")
