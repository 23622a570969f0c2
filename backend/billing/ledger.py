"""The double-entry ledger: one journal transaction per money event, append-only.

`post_journal` writes the lines of one journal transaction in one statement; the database checks
at commit that its debits equal its credits (`billing_ledger_balanced`), and refuses any UPDATE or
DELETE of an entry. Accounts (API.md): `industrial_receivable:<org>`, `platform_revenue`,
`supplier_payable:<distributor org>`; self-billing (docs/billing.md) moves the payable to
`supplier_invoiced:<distributor org>` and the payout settles it against `platform_cash`. Amounts
exclude tax.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.billing.models import LedgerEntry
from backend.db import database, in_transaction
from backend.model import new_id

DEBIT, CREDIT = "debit", "credit"
PLATFORM_REVENUE = "platform_revenue"
PLATFORM_CASH = "platform_cash"  # money the platform pays out (supplier payouts)


def industrial_receivable(organization_id: str) -> str:
    return f"industrial_receivable:{organization_id}"


def supplier_payable(organization_id: str) -> str:
    """What the platform owes a distributor for a collected reservation, before its invoice."""
    return f"supplier_payable:{organization_id}"


def supplier_invoiced(organization_id: str) -> str:
    """What the platform owes a distributor on its issued self-billed invoices, until paid out."""
    return f"supplier_invoiced:{organization_id}"


@dataclass(frozen=True)
class Posting:
    account: str
    direction: str
    amount_cents: int


class UnbalancedJournal(ValueError):
    pass


def post_journal(postings: list[Posting], *, description: str, reservation_id: str | None = None,
                 invoice_id: str | None = None, payment_order_id: str | None = None) -> str:
    """Write one balanced journal transaction; returns its id. Checked here first (a clear
    error) and by the database at commit (whatever the caller does)."""
    if not in_transaction():
        raise RuntimeError("post_journal runs inside the caller's transaction()")
    debits = sum(p.amount_cents for p in postings if p.direction == DEBIT)
    credits = sum(p.amount_cents for p in postings if p.direction == CREDIT)
    if debits != credits or any(p.direction not in (DEBIT, CREDIT) or p.amount_cents < 0 for p in postings):
        raise UnbalancedJournal(f"journal does not balance: debits {debits}, credits {credits}")
    journal_id = new_id()
    LedgerEntry.insert_many([
        {"journal_id": journal_id, "account": p.account, "direction": p.direction, "amount_cents": p.amount_cents,
         "reservation_id": reservation_id, "invoice_id": invoice_id, "payment_order_id": payment_order_id,
         "description": description}
        for p in postings
    ]).execute()
    return journal_id


def balance(account: str) -> int:
    """Debits minus credits of an account."""
    cursor = database.execute_sql(
        "SELECT coalesce(sum(CASE direction WHEN 'debit' THEN amount_cents ELSE -amount_cents END), 0)"
        " FROM billing_ledger_entry WHERE account = %s", (account,))
    return int(cursor.fetchone()[0])
