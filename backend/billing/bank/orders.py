"""The payment orders a file run takes: spec C `paid` (a collection answers `paid`; a refund or a
payout is `paid` when made), in no live file yet (`unsent`), of a positive amount in euros, oldest
first; and the refusals every run shares."""

from __future__ import annotations

from backend.billing.models import BankFileKind, Invoice, PaymentOrder, PaymentStatus, Settlement
from backend.errors import Conflict


def due(*conditions):
    return (PaymentOrder.select()
            .where(PaymentOrder.status == PaymentStatus.PAID, PaymentOrder.settlement == Settlement.UNSENT,
                   PaymentOrder.amount_cents > 0, PaymentOrder.currency == "EUR", *conditions)
            .order_by(PaymentOrder.created_at, PaymentOrder.id))


def invoice_numbers(orders: list[PaymentOrder]) -> dict[str, str]:
    """The number of the invoice each order names (by order id), the remittance of its transaction."""
    ids = list({order.invoice_id for order in orders if order.invoice_id})
    numbers = dict(Invoice.select(Invoice.id, Invoice.number).where(Invoice.id.in_(ids)).tuples())
    return {order.id: numbers[order.invoice_id] for order in orders if order.invoice_id in numbers}


def problems_of(order: PaymentOrder, found: list[tuple[str, str]],
                invoice_number: str | None) -> list[tuple[str, str, str]]:
    """`(payment order id, field, problem)` of each `(field, problem)` found, and of an order naming
    no invoice (its number is the remittance)."""
    if invoice_number is None:
        found = [*found, ("invoiceNumber", "missing")]
    return [(order.id, field, problem) for field, problem in found]


def nothing_due(kind: BankFileKind, **details) -> Conflict:
    return Conflict(f"no payment order is due for a {kind} file", reason="nothing_due", kind=kind.value, **details)


def refuse_problems(kind: BankFileKind, problems: list[tuple[str, str, str]]) -> None:
    """409 `bank_details_invalid` naming each (payment order, field, problem) failing its check."""
    if problems:
        raise Conflict(f"no {kind} file is made: {len(problems)} value(s) fail their check "
                       "(an IBAN, a BIC or a mandate reference)", reason="bank_details_invalid",
                       problems=[{"paymentOrderId": order_id, "field": field, "problem": problem}
                                 for order_id, field, problem in problems])
