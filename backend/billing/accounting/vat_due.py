"""VAT on services when it is due: moved from the pending account to the account of VAT due as the
bank books the money (docs/accounting.md, "VAT on services: when it is due").

The VAT on services is due when the price is received (CGI art. 269-2-c), and the buyer deducts
it when the supplier owes it (art. 271): a sale's VAT waits in `44574` and a self-billed
purchase's in `44564` (`ledger`), each line in its invoice's lettering group, until the bank
books a payment of that invoice. The pending VAT then moves to `44571` (or `44566`) by the share
of what is still to be paid that the payment settles, in the same entry that books the money:

    moved = pending x paid / still to be paid     (rounded half up, `backend.money`)

"Still to be paid" is read from the books, per invoice: what the customer still owes or is owed,
in `411` and in transit (`511`, `473`), for a sale; what the platform still owes the distributor
(`401` and `473`) for a self-billed invoice. A payment of all that is left moves all the VAT left,
so an invoice paid in full has moved exactly its VAT, whatever its partial payments rounded. Money
paid back (a refund) moves VAT back to pending the same way, a returned debit exactly what its
collection moved (`cash`). An invoice whose VAT was due at issue has nothing pending: nothing
moves.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from backend.billing.accounting.chart import Account
from backend.billing.accounting.entries import Line
from backend.db import database
from backend.money import round_half_up_div

_SALE_OWED = (Account.CUSTOMERS, Account.RECEIPTS_IN_TRANSIT, Account.PAYMENTS_IN_TRANSIT)
_PURCHASE_OWED = (Account.SUPPLIERS, Account.PAYMENTS_IN_TRANSIT)
_ACCOUNTS = sorted({account.value for account in (*_SALE_OWED, *_PURCHASE_OWED, Account.VAT_COLLECTED_PENDING,
                                                   Account.VAT_DEDUCTIBLE_PENDING)})


def share(pending: int, paid: int, owed: int) -> int:
    """The VAT a payment of `paid` moves out of `pending` when `owed` is still to be paid (the
    three signed alike for a payment, `paid` of the other sign for money paid back)."""
    if owed == 0 or (paid * owed > 0 and abs(paid) >= abs(owed)):
        return pending
    magnitude = round_half_up_div(abs(pending * paid), abs(owed))
    return magnitude if (pending >= 0) == ((paid >= 0) == (owed >= 0)) else -magnitude


def move_lines(group: str, cents: int, *, purchase: bool) -> list[Line]:
    """The lines moving `cents` of the invoice `group`'s pending VAT to the VAT due (negative: back
    to pending)."""
    if cents == 0:
        return []
    amount, forward = abs(cents), cents > 0
    due_account = Account.VAT_DEDUCTIBLE if purchase else Account.VAT_COLLECTED
    pending_account = Account.VAT_DEDUCTIBLE_PENDING if purchase else Account.VAT_COLLECTED_PENDING
    # Forward: a sale's pending VAT is debited (to 44571, credited); a purchase's credited (to 44566).
    pending_debited = forward != purchase
    pending = Line(pending_account, **{"debit_cents" if pending_debited else "credit_cents": amount},
                   letter_group=group)
    due = Line(due_account, **{"credit_cents" if pending_debited else "debit_cents": amount})
    return [pending, due] if pending_debited else [due, pending]


@dataclass
class _Position:
    owed: int
    pending: int


class Positions:
    """What is still to be paid and the VAT pending of invoices, read once from the books and kept
    up to date as the caller posts payments of them (several in one statement)."""

    def __init__(self, groups: Iterable[str], *, purchase: bool) -> None:
        self.purchase = purchase
        self._positions = {group: _Position(0, 0) for group in groups}
        if not self._positions:
            return
        rows = database.execute_sql(
            "SELECT letter_group, account, sum(debit_cents - credit_cents) FROM accounting_line"
            " WHERE letter_group = ANY(%s) AND account = ANY(%s) GROUP BY letter_group, account",
            (sorted(self._positions), _ACCOUNTS)).fetchall()
        for group, account, balance in rows:
            position, balance = self._positions[group], int(balance)
            if purchase and account in _PURCHASE_OWED:
                position.owed -= balance
            elif not purchase and account in _SALE_OWED:
                position.owed += balance
            elif purchase and account == Account.VAT_DEDUCTIBLE_PENDING:
                position.pending += balance
            elif not purchase and account == Account.VAT_COLLECTED_PENDING:
                position.pending -= balance

    def paid(self, group: str, cents: int) -> list[Line]:
        """The lines of the VAT a payment of `cents` of invoice `group` makes due (negative: money
        paid back); the position moves on by it."""
        position = self._positions[group]
        moved = share(position.pending, cents, position.owed)
        position.pending -= moved
        position.owed -= cents
        return move_lines(group, moved, purchase=self.purchase)
