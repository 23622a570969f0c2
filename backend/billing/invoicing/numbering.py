"""Gapless, chronological invoice numbers per series (CGI, annexe II, art. 242 nonies A, I-7°).

A number is allocated from the series' counter row, incremented (and so locked) inside the
transaction that issues the invoice: a concurrent issuer of the same series waits for the commit
(or the rollback, which gives the number back), so numbers have no gap and no duplicate. The
counter also keeps the series' last issue time, and an invoice's issue time is the later of the
application clock (read before the lock) and that last time, computed under the lock: issue
times never go backwards along the numbers, so number order is issue order. Never a database
sequence (which leaves gaps on rollback), never `MAX()+1` without a lock.

`allocate` is one statement (the counter created on the series' first invoice, else
incremented), sent by the service that issues the invoice (`invoices`) just before the invoice's
own insert, so that the counter row stays locked as briefly as the transaction allows.

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
from backend.billing.models import InvoiceKind
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


# The counter created on the series' first invoice, else incremented (and so locked until the
# transaction ends); its issue time the later of the clock's and the series' last one.
ALLOCATE = (
    "INSERT INTO billing_number_counter AS c (series, last_value, updated_at) VALUES (%s, 1, %s)"
    " ON CONFLICT (series) DO UPDATE SET last_value = c.last_value + 1,"
    " updated_at = GREATEST(EXCLUDED.updated_at, c.updated_at)"
    " RETURNING c.last_value, c.updated_at"
)


def allocate(series: str, now: datetime) -> tuple[str, int, datetime]:
    """`(number, sequence, issue time)` of the series' next invoice, in the caller's transaction:
    the counter row stays locked until it ends. The issue time is the later of `now` and the
    series' last one."""
    sequence, issued_at = database.execute_sql(ALLOCATE, (series, now)).fetchone()
    return number_of(series, sequence), sequence, issued_at


def number_of(series: str, sequence: int) -> str:
    """The number: the series, a dash, the sequence zero-padded to 6 digits (more once past 999999)."""
    return f"{series}-{sequence:06d}"


def series_now(kind: InvoiceKind, *, issuer_siren: str | None = None) -> tuple[str, datetime]:
    """`(series, now)`: the series of `kind` for the current Paris year, and the clock reading
    that chose it (the issue time, unless the series' last one is later). Every issue time of a
    series then lies in its year: the latest of readings that all do."""
    if not in_transaction():
        raise RuntimeError("an invoice number is allocated inside the transaction that issues the invoice")
    now = clock.now()
    return series_name(kind, year=paris_year(now), issuer_siren=issuer_siren), now
