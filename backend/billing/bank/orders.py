"""The payment orders a file run takes: spec C `paid` (a collection answers `paid`; a refund or a
payout is `paid` when made), in no live file yet (`unsent`), of a positive amount in euros, oldest
first; and which of them are held back, and why.

Held, not blocked (API.md "Payouts and refunds only move money received, to accounts reviewed"):
an order that cannot go (its organization's KYB is not approved, an account or a mandate that
fails its check, a mandate ended) stays `unsent` and out of the file, with its reason; the others
go. A held order is never lost: it is due again at every run and goes into the first file after
its reason is lifted (the KYB approved again, the account refreshed, a new mandate)."""

from __future__ import annotations

from dataclasses import dataclass

from backend.billing.models import BankFileKind, Invoice, PaymentOrder, PaymentStatus, Settlement
from backend.errors import Conflict
from backend.identity.models import KybStatus, Organization

KYB_NOT_APPROVED = "kyb_not_approved"
BANK_DETAILS_INVALID = "bank_details_invalid"


@dataclass(frozen=True)
class Held:
    """An order held back from a file: `reason`, and for `bank_details_invalid` the field and what
    is wrong with it."""

    payment_order_id: str
    reason: str
    field: str | None = None
    problem: str | None = None

    def shown(self) -> dict:
        return {"paymentOrderId": self.payment_order_id, "reason": self.reason,
                **({"field": self.field, "problem": self.problem} if self.field else {})}


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


def kyb_approved(orders: list[PaymentOrder]) -> set[str]:
    """The organizations of `orders` whose KYB is approved (their unsent orders may go)."""
    ids = list({order.organization_id for order in orders})
    return {row.id for row in Organization.select(Organization.id)
            .where(Organization.id.in_(ids), Organization.kyb_status == KybStatus.APPROVED)}


def first_hold(order: PaymentOrder, found: list[tuple[str, str]], invoice_number: str | None) -> Held | None:
    """`bank_details_invalid` for the first `(field, problem)` found, or for an order naming no
    invoice (its number is the remittance); None when nothing is wrong."""
    if invoice_number is None:
        found = [*found, ("invoiceNumber", "missing")]
    if not found:
        return None
    field, problem = found[0]
    return Held(order.id, BANK_DETAILS_INVALID, field, problem)


def split(orders: list[PaymentOrder], hold) -> tuple[list[PaymentOrder], list[Held]]:
    """`(orders that go, orders held)`: `hold(order)` answers the order's `Held` or None."""
    going, held = [], []
    for order in orders:
        reason = hold(order)
        if reason is None:
            going.append(order)
        else:
            held.append(reason)
    return going, held


def nothing_due(kind: BankFileKind, held: list[Held]) -> Conflict:
    """409 `nothing_due`: no order can go; `details.held` lists those held back and why."""
    said = f"no payment order can go in a {kind} file ({len(held)} held back)" if held else (
        f"no payment order is due for a {kind} file")
    return Conflict(said, reason="nothing_due", kind=kind.value, held=[item.shown() for item in held])
