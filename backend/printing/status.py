"""The PrintOrderStatus machine of spec B, as pure functions (no database, no clock).

Forward progression is the sequential chain pending -> sent -> in_production -> produced ->
delivered, one step at a time; rollback walks the same chain one step back. `draft` (not yet
released to the printer) and `cancelled` sit outside the chain: no standard forward or backward
transition reaches or leaves them. Moving `draft` to `pending` is the admin release; cancelling
is the admin operation of API.md, allowed from any status but `delivered`.

Every refusal is a `ValidationError` (code VALIDATION_ERROR, as spec B names it) whose details
carry `currentStatus` and `requestedStatus`, so a client (and the batch advance counters) can
tell which step was asked from which state.
"""

from __future__ import annotations

from enum import StrEnum

from backend.errors import ValidationError


class PrintOrderStatus(StrEnum):
    DRAFT = "draft"
    PENDING = "pending"
    SENT = "sent"
    IN_PRODUCTION = "in_production"
    PRODUCED = "produced"
    DELIVERED = "delivered"
    CANCELLED = "cancelled"


CHAIN: tuple[PrintOrderStatus, ...] = (
    PrintOrderStatus.PENDING,
    PrintOrderStatus.SENT,
    PrintOrderStatus.IN_PRODUCTION,
    PrintOrderStatus.PRODUCED,
    PrintOrderStatus.DELIVERED,
)

# The statuses visible to a printer: a draft is not released to it yet.
PRINTER_VISIBLE: tuple[PrintOrderStatus, ...] = tuple(s for s in PrintOrderStatus if s is not PrintOrderStatus.DRAFT)


def parse_status(value: str) -> PrintOrderStatus:
    """The status named by `value`; VALIDATION_ERROR for anything else."""
    try:
        return PrintOrderStatus(value)
    except ValueError:
        raise ValidationError(
            f"unknown print order status {value!r}",
            fields={"nextStatus": [f"must be one of: {', '.join(PrintOrderStatus)}"]},
        ) from None


def _refuse(current: PrintOrderStatus, requested: str | None, why: str) -> ValidationError:
    return ValidationError(why, currentStatus=current.value, requestedStatus=requested)


def next_status(current: str, requested: str) -> PrintOrderStatus:
    """The status after the forward step `current` -> `requested`, if it is the legitimate one."""
    current, requested = PrintOrderStatus(current), parse_status(requested)
    if current not in CHAIN or current is PrintOrderStatus.DELIVERED:
        raise _refuse(current, requested.value, f"a {current.value} print order has no forward step")
    expected = CHAIN[CHAIN.index(current) + 1]
    if requested is not expected:
        raise _refuse(
            current,
            requested.value,
            f"a {current.value} print order can only move forward to {expected.value}, not {requested.value}",
        )
    return requested


def rollback(current: str) -> PrintOrderStatus:
    """The status one step back along delivered, produced, in_production, sent, pending."""
    current = PrintOrderStatus(current)
    if current not in CHAIN or current is PrintOrderStatus.PENDING:
        raise _refuse(current, None, f"a {current.value} print order cannot be rolled back")
    return CHAIN[CHAIN.index(current) - 1]


def release(current: str) -> PrintOrderStatus:
    """`pending`, from `draft` only: the admin validates the deposit and hands it to the printer."""
    current = PrintOrderStatus(current)
    if current is not PrintOrderStatus.DRAFT:
        raise _refuse(current, PrintOrderStatus.PENDING.value, f"a {current.value} print order is not a draft")
    return PrintOrderStatus.PENDING


def cancel(current: str) -> PrintOrderStatus:
    """`cancelled`, from any status but `delivered` (already handed over) or `cancelled` itself."""
    current = PrintOrderStatus(current)
    if current in (PrintOrderStatus.DELIVERED, PrintOrderStatus.CANCELLED):
        raise _refuse(
            current, PrintOrderStatus.CANCELLED.value, f"a {current.value} print order cannot be cancelled"
        )
    return PrintOrderStatus.CANCELLED
