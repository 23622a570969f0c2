"""Gapless, chronological invoice numbers per series (CGI, annexe II, art. 242 nonies A, I-7°).

A number is allocated from the series' counter row, locked `FOR UPDATE` inside the transaction
that issues the invoice: a concurrent issuer of the same series waits for the commit (or the
rollback, which gives the number back), so numbers have no gap and no duplicate, and the issue
time is read after the lock is held, so number order is issue order. Never a database sequence
(which leaves gaps on rollback), never `MAX()+1` without a lock.

Series (API.md; the year is the issue date's year in Europe/Paris):

| kind | series | number |
|---|---|---|
| platform_sale | `FAC-RES-<year>` | `FAC-RES-2026-000001` |
| platform_credit_note | `AV-RES-<year>` | `AV-RES-2026-000001` |
| supplier_self_billed | `FAC-SUP-<siren>-<year>` (the distributor's own) | `FAC-SUP-552100554-2026-000001` |
| supplier_credit_note | `AV-SUP-<siren>-<year>` | |
| store_deposit, store_balance (legacy) | `FAC-DEP-<siren>-<year>`, `FAC-BAL-<siren>-<year>` | |
| platform_commission (legacy) | `FAC-COM-<year>` | |
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from backend import clock
from backend.billing.models import InvoiceKind, NumberCounter
from backend.db import database, in_transaction

PARIS = ZoneInfo("Europe/Paris")

_PREFIX = {
    InvoiceKind.PLATFORM_SALE: ("FAC-RES", False),
    InvoiceKind.PLATFORM_CREDIT_NOTE: ("AV-RES", False),
    InvoiceKind.SUPPLIER_SELF_BILLED: ("FAC-SUP", True),
    InvoiceKind.SUPPLIER_CREDIT_NOTE: ("AV-SUP", True),
    InvoiceKind.STORE_DEPOSIT: ("FAC-DEP", True),
    InvoiceKind.STORE_BALANCE: ("FAC-BAL", True),
    InvoiceKind.PLATFORM_COMMISSION: ("FAC-COM", False),
}


def paris_year(moment: datetime) -> int:
    return moment.astimezone(PARIS).year


def series_name(kind: InvoiceKind, *, year: int, issuer_siren: str | None = None) -> str:
    """The series of `kind` for `year`; the store's kinds carry the issuing distributor's SIREN."""
    prefix, per_issuer = _PREFIX[InvoiceKind(kind)]
    if per_issuer:
        if not issuer_siren:
            raise ValueError(f"{kind} invoices are numbered in their issuer's series: a SIREN is needed")
        return f"{prefix}-{issuer_siren}-{year}"
    return f"{prefix}-{year}"


def format_number(series: str, sequence: int) -> str:
    return f"{series}-{sequence:06d}"


def _lock_counter(series: str) -> int:
    """The series' last value, its row locked until the enclosing transaction ends."""
    row = NumberCounter.select(NumberCounter.last_value).where(NumberCounter.series == series).for_update().first()
    if row is None:
        database.execute_sql(
            "INSERT INTO billing_number_counter (series, last_value) VALUES (%s, 0) ON CONFLICT (series) DO NOTHING",
            (series,),
        )
        row = NumberCounter.select(NumberCounter.last_value).where(NumberCounter.series == series).for_update().get()
    return row.last_value


def allocate(kind: InvoiceKind, *, issuer_siren: str | None = None) -> tuple[str, int, datetime]:
    """`(series, sequence, issued_at)`: the next number of the series of `kind` this year, the
    counter row locked until the caller's transaction commits (which makes the number final) or
    rolls back (which gives it back). `issued_at` is read once the lock is held."""
    if not in_transaction():
        raise RuntimeError("an invoice number is allocated inside the transaction that issues the invoice")
    year = paris_year(clock.now())
    while True:
        series = series_name(kind, year=year, issuer_siren=issuer_siren)
        last = _lock_counter(series)
        issued_at = clock.now()
        if paris_year(issued_at) == year:
            break
        year = paris_year(issued_at)  # midnight of 31 December passed while waiting: next year's series
    NumberCounter.update(last_value=last + 1, updated_at=issued_at).where(NumberCounter.series == series).execute()
    return series, last + 1, issued_at
