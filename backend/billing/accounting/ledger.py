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


def supplier_debt(organization_id: str) -> str:
    """What a distributor owes the platform back: a supplier credit note issued after the payout
    of its self-billed invoice, until a later payout deducts it."""
    return f"supplier_debt:{organization_id}"


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
    journal_id, params = journal_params(postings, description=description, reservation_id=reservation_id,
                                        invoice_id=invoice_id, payment_order_id=payment_order_id)
    database.execute_sql(journal_sql(len(postings)), params)
    return journal_id


_COLUMNS = ("journal_id", "account", "direction", "amount_cents", "reservation_id", "invoice_id", "payment_order_id",
            "description")
_INSERT = f"INSERT INTO billing_ledger_entry ({', '.join(_COLUMNS)}) {{values}}"
# The rows of a VALUES list, written only when a condition holds (the amount cast: a bare VALUES
# list in a SELECT gives its values the type text).
_SELECTED = ", ".join("v.amount_cents::bigint" if column == "amount_cents" else f"v.{column}" for column in _COLUMNS)
_WHEN = f"SELECT {_SELECTED} FROM ({{values}}) AS v ({', '.join(_COLUMNS)}) WHERE {{when}}"  # noqa: S608 (constants)


# Sent before a statement writing a journal: the database checks its balance at the end of that
# statement rather than at the commit (the check is deferred by default), e.g. before a statement
# that locks a row every concurrent transaction queues on, such as an invoice series' counter.
CHECK_BALANCE_NOW = "SET CONSTRAINTS billing_ledger_balanced IMMEDIATE"


def journal_sql(postings: int, *, when: str | None = None) -> str:
    """The one INSERT of a journal transaction of `postings` lines (values: `journal_params`), for
    `post_journal` or for a caller sending it as a part of its own statement (a data-modifying
    `WITH` part, written only `when` that SQL condition holds). Written out: peewee building a
    multi-row INSERT cost several times what PostgreSQL spends running it."""
    values = "VALUES " + ", ".join(
        f"(%(ledger_journal)s, %(ledger_account_{n})s, %(ledger_direction_{n})s, %(ledger_amount_{n})s,"
        " %(ledger_reservation)s, %(ledger_invoice)s, %(ledger_order)s, %(ledger_description)s)"
        for n in range(postings))
    return _INSERT.format(values=values if when is None else _WHEN.format(values=values, when=when))


def journal_params(postings: list[Posting], *, description: str, reservation_id: str | None = None,
                   invoice_id: str | None = None, payment_order_id: str | None = None) -> tuple[str, dict]:
    """`(journal_id, values)` of a journal transaction for `journal_sql` (names start `ledger_`);
    refused here when it does not balance."""
    debits = sum(p.amount_cents for p in postings if p.direction == DEBIT)
    credits = sum(p.amount_cents for p in postings if p.direction == CREDIT)
    if not postings or debits != credits or any(p.direction not in (DEBIT, CREDIT) or p.amount_cents < 0
                                                for p in postings):
        raise UnbalancedJournal(f"journal does not balance: debits {debits}, credits {credits}")
    journal_id = new_id()
    params = {"ledger_journal": journal_id, "ledger_reservation": reservation_id, "ledger_invoice": invoice_id,
              "ledger_order": payment_order_id, "ledger_description": description}
    for n, posting in enumerate(postings):
        params.update({f"ledger_account_{n}": posting.account, f"ledger_direction_{n}": posting.direction,
                       f"ledger_amount_{n}": posting.amount_cents})
    return journal_id, params


def balance(account: str) -> int:
    """Debits minus credits of an account."""
    cursor = database.execute_sql(
        "SELECT coalesce(sum(CASE direction WHEN 'debit' THEN amount_cents ELSE -amount_cents END), 0)"
        " FROM billing_ledger_entry WHERE account = %s", (account,))
    return int(cursor.fetchone()[0])


# The money events of API.md "Money that always balances", one function each (the general ledger
# of backend/billing/accounting/ posts them in its journals).

def record_supplier_credit_note(distributor: str, amount_cents: int, *, reservation_id: str | None,
                                credit_note_id: str, description: str) -> str:
    """A supplier credit note (of a self-billed invoice): what it credits goes back from the
    distributor's invoiced payable to its accrued payable."""
    return post_journal([
        Posting(supplier_invoiced(distributor), DEBIT, amount_cents),
        Posting(supplier_payable(distributor), CREDIT, amount_cents),
    ], description=description, reservation_id=reservation_id, invoice_id=credit_note_id)


def record_supplier_debt(distributor: str, amount_cents: int, *, reservation_id: str | None, credit_note_id: str,
                         description: str) -> str:
    """A supplier credit note issued after the payout: the amount it credits, already paid, is the
    distributor's debt."""
    return post_journal([
        Posting(supplier_debt(distributor), DEBIT, amount_cents),
        Posting(supplier_invoiced(distributor), CREDIT, amount_cents),
    ], description=description, reservation_id=reservation_id, invoice_id=credit_note_id)


def record_supplier_debt_deduction(distributor: str, amount_cents: int, *, reservation_id: str | None,
                                   invoice_id: str, description: str) -> str:
    """A payout keeps back the distributor's debt: its invoiced payable settled by compensation."""
    return post_journal([
        Posting(supplier_invoiced(distributor), DEBIT, amount_cents),
        Posting(supplier_debt(distributor), CREDIT, amount_cents),
    ], description=description, reservation_id=reservation_id, invoice_id=invoice_id)


def record_customer_credit_repayment(customer: str, amount_cents: int, *, reservation_id: str | None,
                                     credit_note_id: str, payment_order_id: str, description: str) -> str:
    """The customer's credit (a credit note of a paid sale, which moved no money) repaid: money
    out of the platform's cash, as a payout is."""
    return post_journal([
        Posting(industrial_receivable(customer), DEBIT, amount_cents),
        Posting(PLATFORM_CASH, CREDIT, amount_cents),
    ], description=description, reservation_id=reservation_id, invoice_id=credit_note_id,
        payment_order_id=payment_order_id)
