"""The VAT of a month as the French return (CA3) asks it, read from the books alone
(docs/accounting.md, "The VAT of a month").

Per VAT rate (the rate frozen on the invoice each entry books, or whose VAT it makes due): the VAT
collected (`44571`, credits less debits) and the deductible VAT on services bought (`44566`, debits
less credits): the VAT due that month, at issue for an invoice whose seller opted for debits, when
the bank booked the money otherwise (`vat_due`). Their bases: `706` and its sub-accounts (or `604`)
of an entry whose VAT was due at issue; for VAT made due by a payment, the VAT divided by its rate
(the price paid excluding tax, rounded half up to the cent). VAT still pending (`44574`, `44564`)
is not in the return. Entries are taken by their date in the month. A line of 0 % VAT (a reverse-
charged sale, VAT category AE) posts nothing to a VAT account: its base shows under the rate 0 with
no tax. The totals are the month's `44571` and `44566` balances in the trial balance, to the cent.
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


# Per entry of the month: its rate (the invoice it books, or whose pending VAT it moves), what it
# posts on the revenue, purchase and VAT accounts, and whether its VAT is still pending.
_SQL = """
WITH moved AS (
    SELECT e.invoice_id,
           max(l.letter_group) FILTER (WHERE l.account IN (%(collected_pending)s, %(deductible_pending)s))
               AS pending_group,
           bool_or(l.account = %(collected_pending)s) AS collected_pending,
           bool_or(l.account = %(deductible_pending)s) AS deductible_pending,
           coalesce(sum(l.credit_cents - l.debit_cents) FILTER (WHERE starts_with(l.account, %(sold)s)), 0)
               AS sold,
           coalesce(sum(l.credit_cents - l.debit_cents) FILTER (WHERE l.account = %(collected)s), 0) AS collected,
           coalesce(sum(l.debit_cents - l.credit_cents) FILTER (WHERE l.account = %(bought)s), 0) AS bought,
           coalesce(sum(l.debit_cents - l.credit_cents) FILTER (WHERE l.account = %(deductible)s), 0) AS deductible
      FROM accounting_entry e JOIN accounting_line l ON l.entry_id = e.id
     WHERE e.entry_date BETWEEN %(start)s AND %(end)s
       AND (starts_with(l.account, %(sold)s)
            OR l.account IN (%(collected)s, %(bought)s, %(deductible)s, %(collected_pending)s, %(deductible_pending)s))
     GROUP BY e.id, e.invoice_id
)
SELECT i.vat_rate_bps,
       sum(CASE WHEN m.sold <> 0 AND NOT m.collected_pending THEN m.sold
                WHEN m.sold = 0 AND m.collected <> 0 AND i.vat_rate_bps > 0
                THEN sign(m.collected) * ((2 * abs(m.collected) * 10000 + i.vat_rate_bps) / (2 * i.vat_rate_bps))
                ELSE 0 END),
       sum(m.collected),
       sum(CASE WHEN m.bought <> 0 AND NOT m.deductible_pending THEN m.bought
                WHEN m.bought = 0 AND m.deductible <> 0 AND i.vat_rate_bps > 0
                THEN sign(m.deductible) * ((2 * abs(m.deductible) * 10000 + i.vat_rate_bps) / (2 * i.vat_rate_bps))
                ELSE 0 END),
       sum(m.deductible)
  FROM moved m LEFT JOIN billing_invoice i ON i.id = coalesce(m.pending_group, m.invoice_id)
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
        "collected_pending": Account.VAT_COLLECTED_PENDING.value,
        "deductible_pending": Account.VAT_DEDUCTIBLE_PENDING.value, "start": start, "end": end}).fetchall()
    collected = [RateLine(rate, int(base), int(vat)) for rate, base, vat, _, _ in rows if base or vat]
    deductible = [RateLine(rate, int(base), int(vat)) for rate, _, _, base, vat in rows if base or vat]
    return VatReturn(f"{start:%Y-%m}", collected, deductible)
