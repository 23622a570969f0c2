"""The bank reconciliation (état de rapprochement) as of a day: the bank's balance from the
statements imported, the books' `512`, their difference, and every item between the bank and the
books (docs/accounting.md, "Bank reconciliation").

The books post `512` only from statement lines (`cash`), so the difference is what the bank
holds that no posting followed: the balance the account held before the first statement the
platform imported (`opening_balance`) and lines imported without their posting
(`line_not_posted`, only a database changed past the application makes one). Those items add up to
the difference; `unexplainedCents` is what they leave, zero when everything is explained.

The other items are what sits between the bank and the books without making a difference on
`512`: money asked of the bank in a file and not booked yet (`receipt_in_transit` on `511`,
`payment_in_transit` on `473`) and statement lines nothing explained yet (`waiting_line` on
`471`, with their age in days). The report lists them with their amounts as the bank will move
them (positive in, negative out).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from datetime import date

from backend.billing.accounting.cash import IN_TRANSIT
from backend.billing.accounting.chart import Account
from backend.db import database

EXPLAINING = frozenset({"opening_balance", "line_not_posted"})


@dataclass(frozen=True)
class Item:
    kind: str
    reference: str
    amount_cents: int
    day: date | None = None
    age_days: int | None = None

    @property
    def explains_difference(self) -> bool:
        return self.kind in EXPLAINING


@dataclass(frozen=True)
class Reconciliation:
    date: date
    book_balance_cents: int
    bank_balance_cents: int
    items: list[Item] = field(default_factory=list)

    @property
    def difference_cents(self) -> int:
        return self.bank_balance_cents - self.book_balance_cents

    @property
    def unexplained_cents(self) -> int:
        return self.difference_cents - sum(item.amount_cents for item in self.items if item.explains_difference)


_SIGNED = "CASE WHEN b.direction = 'credit' THEN b.amount_cents ELSE -b.amount_cents END"


def bank_balance(day: date) -> int:
    """The bank's balance at the end of `day`: the first camt.053's opening balance (0 without one)
    plus every line imported booked on or before `day`."""
    return _first_opening() + int(database.execute_sql(
        f"SELECT coalesce(sum({_SIGNED}), 0) FROM billing_bank_line b WHERE b.booking_date <= %s",  # noqa: S608
        (day,)).fetchone()[0])


def _first_opening() -> int:
    row = database.execute_sql(
        "SELECT opening_balance_cents FROM billing_bank_statement WHERE opening_balance_cents IS NOT NULL"
        " ORDER BY import_seq LIMIT 1").fetchone()
    return int(row[0]) if row else 0


def book_balance(day: date, account: Account = Account.BANK) -> int:
    return int(database.execute_sql(
        "SELECT coalesce(sum(debit_cents - credit_cents), 0) FROM accounting_line l"
        " JOIN accounting_entry e ON e.id = l.entry_id WHERE l.account = %s AND e.entry_date <= %s",
        (Account(account).value, day)).fetchone()[0])


def reconcile(day: date) -> Reconciliation:
    items: list[Item] = []
    opening = _first_opening()
    if opening:
        items.append(Item("opening_balance", "balance before the first statement imported", opening))
    items += [Item("line_not_posted", reference, amount, booked) for reference, amount, booked in database.execute_sql(
        f"SELECT b.entry_key, {_SIGNED}, b.booking_date FROM billing_bank_line b"  # noqa: S608
        " WHERE b.booking_date <= %s AND NOT EXISTS (SELECT FROM accounting_entry e WHERE e.bank_line_id = b.id)"
        " ORDER BY b.booking_date, b.id", (day,)).fetchall()]
    # Orders handed to the bank and not booked by then: what each still holds in 511 or 473.
    items += [Item("receipt_in_transit" if account == Account.RECEIPTS_IN_TRANSIT else "payment_in_transit",
                   reference, int(amount), posted)
              for reference, account, amount, posted in database.execute_sql(
        "SELECT coalesce(max(e.piece_ref), e.payment_order_id), l.account, sum(l.debit_cents - l.credit_cents),"
        " max(e.entry_date) FILTER (WHERE e.event = %s) AS posted FROM accounting_entry e"
        " JOIN accounting_line l ON l.entry_id = e.id AND l.account IN (%s, %s)"
        " WHERE e.payment_order_id IS NOT NULL AND e.entry_date <= %s"
        " GROUP BY e.payment_order_id, l.account HAVING sum(l.debit_cents - l.credit_cents) <> 0"
        " ORDER BY posted, e.payment_order_id",
        (IN_TRANSIT, Account.RECEIPTS_IN_TRANSIT.value, Account.PAYMENTS_IN_TRANSIT.value, day)).fetchall()]
    # Lines in 471 on the day: imported into it, not taken out of it by then.
    items += [Item("waiting_line", reference, amount, booked, (day - booked).days)
              for reference, amount, booked in database.execute_sql(
        f"SELECT b.entry_key, {_SIGNED}, b.booking_date FROM billing_bank_line b"  # noqa: S608
        " JOIN accounting_entry e ON e.bank_line_id = b.id"
        " JOIN accounting_line l ON l.entry_id = e.id AND l.account = %s"
        " WHERE e.entry_date <= %s AND NOT EXISTS (SELECT FROM billing_bank_line_resolution r"
        "   JOIN billing_bank_line o ON o.id = r.other_line_id"
        "   WHERE r.line_id = b.id AND r.how = 'refunded' AND greatest(o.booking_date, b.booking_date) <= %s)"
        " GROUP BY b.id, b.entry_key, b.direction, b.amount_cents, b.booking_date"
        " HAVING sum(l.debit_cents - l.credit_cents) <> 0 ORDER BY b.booking_date, b.id",
        (Account.SUSPENSE.value, day, day)).fetchall()]
    return Reconciliation(day, book_balance(day), bank_balance(day), items)


_KIND_LABELS = {
    "opening_balance": "Solde du compte avant le premier relevé importé",
    "line_not_posted": "Ligne de relevé sans écriture",
    "receipt_in_transit": "Prélèvement remis, non crédité (511)",
    "payment_in_transit": "Virement émis, non débité (473)",
    "waiting_line": "Ligne de relevé en attente (471)",
}


def _euros(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100:,}".replace(",", "\u202f") + f",{abs(cents) % 100:02d} €"


def as_html(report: Reconciliation, *, company: str) -> str:
    """The reconciliation as a printable document (French, as the accountant files it)."""
    def row(*cells: str) -> str:
        return "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in cells) + "</tr>"

    explaining = [item for item in report.items if item.explains_difference]
    between = [item for item in report.items if not item.explains_difference]
    items = "".join(row(_KIND_LABELS[item.kind], item.reference, item.day.isoformat() if item.day else "",
                        "" if item.age_days is None else f"{item.age_days} j", _euros(item.amount_cents))
                    for item in [*explaining, *between])
    head = row("Élément", "Référence", "Date", "Âge", "Montant")
    return (
        '<!doctype html><html lang="fr"><head><meta charset="utf-8"><title>État de rapprochement</title>'
        "<style>body{font-family:sans-serif;font-size:10pt}table{width:100%;border-collapse:collapse}"
        "td{padding:3px;border:1px solid #ccc}</style></head><body>"
        f"<h1>État de rapprochement bancaire au {report.date.isoformat()}</h1><p>{html.escape(company)}</p><table>"
        + row("Solde de la banque (relevés importés)", _euros(report.bank_balance_cents))
        + row("Solde du compte 512 (comptabilité)", _euros(report.book_balance_cents))
        + row("Écart (banque - comptabilité)", _euros(report.difference_cents))
        + row("Écart non expliqué", _euros(report.unexplained_cents))
        + f"</table><h2>Éléments ({len(report.items)})</h2><table>{head}{items}</table></body></html>")
