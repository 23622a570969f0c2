"""The VAT of a month as the French return (CA3) asks it, read from the books alone
(docs/accounting.md, "The VAT of a month").

Per VAT rate (the rate frozen on the invoice each entry books): the VAT collected (`44571`,
credits less debits) with its base (`706` and its sub-accounts, of the same entries), and the deductible VAT on services
bought (`44566`, debits less credits) with its base (`604`). Entries are taken by their date in
the month. A line of 0 % VAT (a reverse-charged sale, VAT category AE) posts nothing to a VAT
account: its base (on `7062`) shows under the rate 0 with no tax. The totals are the month's `44571` and
`44566` balances in the trial balance, to the cent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from backend.billing.accounting.chart import Account
from backend.db import database


@dataclass(frozen=True)
class RateLine:
    rate_bps: int | None  # None: an entry naming no invoice
    base_cents: int
    vat_cents: int


@dataclass(frozen=True)
class VatReturn:
    month: str  # YYYY-MM
    collected: list[RateLine]
    deductible: list[RateLine]

    @property
    def collected_cents(self) -> int:
        return sum(line.vat_cents for line in self.collected)

    @property
    def deductible_cents(self) -> int:
        return sum(line.vat_cents for line in self.deductible)

    @property
    def due_cents(self) -> int:
        """VAT due for the month (negative: a VAT credit)."""
        return self.collected_cents - self.deductible_cents


_SQL = """
SELECT i.vat_rate_bps,
       coalesce(sum(l.credit_cents - l.debit_cents) FILTER (WHERE starts_with(l.account, %(sold)s)), 0),
       coalesce(sum(l.credit_cents - l.debit_cents) FILTER (WHERE l.account = %(collected)s), 0),
       coalesce(sum(l.debit_cents - l.credit_cents) FILTER (WHERE l.account = %(bought)s), 0),
       coalesce(sum(l.debit_cents - l.credit_cents) FILTER (WHERE l.account = %(deductible)s), 0)
  FROM accounting_entry e JOIN accounting_line l ON l.entry_id = e.id
  LEFT JOIN billing_invoice i ON i.id = e.invoice_id
 WHERE e.entry_date BETWEEN %(start)s AND %(end)s
   AND (starts_with(l.account, %(sold)s) OR l.account IN (%(collected)s, %(bought)s, %(deductible)s))
 GROUP BY i.vat_rate_bps ORDER BY i.vat_rate_bps NULLS LAST
"""


def month_bounds(month: str) -> tuple[date, date]:
    """The first and last day of `YYYY-MM`; ValueError else."""
    if not re.fullmatch(r"\d{4}-\d{2}", month):
        raise ValueError(f"not a month YYYY-MM: {month!r}")
    year, number = (int(part) for part in month.split("-"))
    start = date(year, number, 1)
    following = date(year + (number == 12), number % 12 + 1, 1)
    return start, date.fromordinal(following.toordinal() - 1)


def vat_return(month: str) -> VatReturn:
    start, end = month_bounds(month)
    rows = database.execute_sql(_SQL, {
        "sold": Account.SERVICES_SOLD.value, "collected": Account.VAT_COLLECTED.value,
        "bought": Account.SERVICES_BOUGHT.value, "deductible": Account.VAT_DEDUCTIBLE.value,
        "start": start, "end": end}).fetchall()
    collected = [RateLine(rate, int(base), int(vat)) for rate, base, vat, _, _ in rows if base or vat]
    deductible = [RateLine(rate, int(base), int(vat)) for rate, _, _, base, vat in rows if base or vat]
    return VatReturn(f"{start:%Y-%m}", collected, deductible)
