"""Which payment order a statement line settles or returns (docs/bank.md "Matching").

- A credit names a collection (money in): by its end-to-end id (the payment order's id without
  its dashes, which the platform's debits carry: `end_to_end`), else by an invoice number in its
  remittance with the exact amount of the one `bank_transfer` collection of that invoice still
  waiting for the bank.
- A debit with a return reason (an R-transaction) returns the `sepa_dd` collection its end-to-end
  id names, in a file or settled, of the same amount.
- Any other debit names a payout or a refund (money out) by its end-to-end id.

A line settles only an order still waiting for the bank (`unsent` or `in_file`) of the same amount,
and each order once: a second payment of the same invoice, a short payment, a payer the platform
does not know wait in the unmatched queue for an admin (`decide` never guesses).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from backend.billing.bank.camt import Line
from backend.billing.bank.end_to_end import order_id_of
from backend.billing.models import Invoice, PaymentKind, PaymentMethod, PaymentOrder, PaymentStatus, Settlement

MATCHED, RETURNED, UNMATCHED = "matched", "returned", "unmatched"
INCOMING = frozenset({PaymentKind.RESERVATION_TOTAL.value, PaymentKind.DEPOSIT.value, PaymentKind.BALANCE.value})
OUTGOING = frozenset({PaymentKind.REFUND.value, PaymentKind.SUPPLIER_PAYOUT.value})
WAITING = frozenset({Settlement.UNSENT.value, Settlement.IN_FILE.value})
RETURNABLE = frozenset({Settlement.IN_FILE.value, Settlement.SETTLED.value})
INVOICE_NUMBER = re.compile(r"\bFAC-RES-\d{4}-\d{6,}\b", re.IGNORECASE)
_CHUNK = 5000
# What the rules read of a payment order (rows as named tuples: thousands of lines, no model instances).
_FIELDS = PaymentOrder.select(PaymentOrder.id, PaymentOrder.kind, PaymentOrder.method, PaymentOrder.status,
                              PaymentOrder.settlement, PaymentOrder.amount_cents)


@dataclass(frozen=True)
class Decision:
    state: str
    payment_order_id: str | None = None


def settles(line: Line, order: PaymentOrder) -> bool:
    """Whether the credit or plain debit `line` settles `order` (the rule, for a manual match too)."""
    kinds = INCOMING if line.credit else OUTGOING
    return (line.return_code is None and order.kind in kinds and order.settlement in WAITING
            and order.status == PaymentStatus.PAID and order.amount_cents == line.amount_cents)


def returns(line: Line, order: PaymentOrder, *, settled_here: bool = False) -> bool:
    """Whether the returned debit `line` returns the direct debit `order` (`settled_here`: settled by
    an earlier line of the same statement)."""
    return (line.return_code is not None and not line.credit and order.kind == PaymentKind.RESERVATION_TOTAL
            and order.method == PaymentMethod.SEPA_DD and (settled_here or order.settlement in RETURNABLE)
            and order.status == PaymentStatus.PAID and order.amount_cents == line.amount_cents)


def decide(lines: list[Line]) -> list[Decision]:
    """One decision per line, in order; an order is taken by the first line that matches it."""
    by_id = _orders(PaymentOrder.id, {_order_id(line) for line in lines} - {None})
    numbers = {number.upper() for line in lines if line.credit and line.remittance
               for number in INVOICE_NUMBER.findall(line.remittance)}
    by_invoice: dict[str, list[PaymentOrder]] = {}
    for order in _transfers_of(numbers):
        by_invoice.setdefault(order.invoice_number, []).append(order)
    taken: dict[str, set[str]] = {MATCHED: set(), RETURNED: set()}
    decisions = []
    for line in lines:
        decision = _decide(line, by_id, by_invoice, taken)
        if decision.payment_order_id:
            taken[decision.state].add(decision.payment_order_id)
        decisions.append(decision)
    return decisions


def _decide(line: Line, by_id: dict[str, PaymentOrder], by_invoice: dict[str, list[PaymentOrder]],
            taken: dict[str, set[str]]) -> Decision:
    """A debit settled by an earlier line of the same statement may still be returned by a later one."""
    named = by_id.get(_order_id(line) or "")
    if named is not None and named.id not in taken[RETURNED]:
        if returns(line, named, settled_here=named.id in taken[MATCHED]):
            return Decision(RETURNED, named.id)
        if named.id not in taken[MATCHED] and settles(line, named):
            return Decision(MATCHED, named.id)
    if line.credit and line.return_code is None and line.remittance:
        for number in dict.fromkeys(n.upper() for n in INVOICE_NUMBER.findall(line.remittance)):
            candidates = [order for order in by_invoice.get(number, ())
                          if order.id not in taken[MATCHED] and order.id not in taken[RETURNED]
                          and settles(line, order)]
            if len(candidates) == 1:
                return Decision(MATCHED, candidates[0].id)
    return Decision(UNMATCHED)


def _order_id(line: Line) -> str | None:
    return order_id_of(line.end_to_end_id) if line.end_to_end_id else None


def _orders(column, values: Iterable[str]) -> dict[str, PaymentOrder]:
    values = sorted(values)
    found: dict[str, PaymentOrder] = {}
    for start in range(0, len(values), _CHUNK):
        for order in _FIELDS.where(column.in_(values[start:start + _CHUNK])).namedtuples():
            found[order.id] = order
    return found


def _transfers_of(numbers: set[str]) -> list[PaymentOrder]:
    """The bank-transfer collections waiting for the bank of the invoices `numbers`, each with its
    `invoice_number`."""
    ordered = sorted(numbers)
    orders = []
    for start in range(0, len(ordered), _CHUNK):
        orders += list(_FIELDS.select_extend(Invoice.number.alias("invoice_number"))
                       .join(Invoice, on=PaymentOrder.invoice == Invoice.id)
                       .where(Invoice.number.in_(ordered[start:start + _CHUNK]),
                              PaymentOrder.method == PaymentMethod.BANK_TRANSFER,
                              PaymentOrder.settlement.in_(sorted(WAITING)))
                       .namedtuples())
    return orders
