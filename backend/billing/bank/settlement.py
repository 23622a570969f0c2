"""Moving a payment order's `settlement` (migration 144 allows the moves; this module makes them).

`unsent` -> `in_file` when a bank file takes the order (`files.py`), back to `unsent` when that file
is voided (`files.void_file`); `settled` when a statement books it (`settle`); `returned` when the bank returns it
(`mark_returned`). Each move is one conditional UPDATE, so two statements racing for the same order
move it once; run it inside the caller's transaction.
"""

from __future__ import annotations

import re
from datetime import date

from backend import clock
from backend.billing.accounting import cash
from backend.billing.accounting.entries import paris_day
from backend.billing.models import PaymentOrder, Settlement
from backend.errors import Conflict, NotFound, ValidationError

_REASON_CODE = re.compile(r"^[A-Z0-9]{4}$")


def _current(order_id: str) -> PaymentOrder:
    order = PaymentOrder.get_or_none(PaymentOrder.id == order_id)
    if order is None:
        raise NotFound("payment order not found", paymentOrderId=order_id)
    return order


def put_in_file(order_ids: list[str]) -> None:
    """`unsent` -> `in_file` for the orders a new bank file takes (locked by the caller, so each moves)."""
    moved = (PaymentOrder.update(settlement=Settlement.IN_FILE, updated_at=clock.now())
             .where(PaymentOrder.id.in_(order_ids), PaymentOrder.settlement == Settlement.UNSENT)
             .execute())
    if moved != len(order_ids):
        raise Conflict("a payment order of the file moved meanwhile: no file is made", reason="order_moved")


def take_out_of_file(order_ids: list[str]) -> None:
    """`in_file` -> `unsent` for the orders of a voided file; 409 when one has moved on (the bank
    booked or returned it: the file was not refused). Its debits leave `511` for `411` again in
    the books (the next file hands them to the bank anew)."""
    moved = (PaymentOrder.update(settlement=Settlement.UNSENT, updated_at=clock.now())
             .where(PaymentOrder.id.in_(order_ids), PaymentOrder.settlement == Settlement.IN_FILE)
             .execute())
    if moved != len(order_ids):
        raise Conflict("a payment order of the file was settled or returned by the bank: the file is not voided",
                       reason="file_has_bank_outcomes")
    cash.post_out_of_transit(order_ids, day=paris_day(clock.now()))


def settle(order_id: str, *, booked_on: date) -> bool:
    """Booked on a statement: `in_file` or `unsent` (a transfer the payer made) becomes `settled` on
    `booked_on`. False when it was settled already (the same line seen twice); 409 when returned."""
    moved = (PaymentOrder
             .update(settlement=Settlement.SETTLED, settled_on=booked_on, updated_at=clock.now())
             .where(PaymentOrder.id == order_id,
                    PaymentOrder.settlement.in_([Settlement.UNSENT, Settlement.IN_FILE]))
             .execute())
    if moved:
        return True
    order = _current(order_id)
    if order.settlement == Settlement.SETTLED:
        return False
    raise Conflict("the payment order was returned by the bank", paymentOrderId=order_id,
                   reason="payment_order_returned")


def mark_returned(order_id: str, *, reason_code: str, returned_on: date) -> bool:
    """Returned by the bank (an R-transaction) with its ISO 20022 reason code (`AM04`, `MD06`...):
    `in_file` or `settled` becomes `returned`. False when it was returned already; 409 when the
    order never went to the bank (`unsent`)."""
    if not _REASON_CODE.match(reason_code):
        raise ValidationError("a return reason is four letters or digits (ISO 20022)", reason="bad_return_code",
                              reasonCode=reason_code)
    moved = (PaymentOrder
             .update(settlement=Settlement.RETURNED, return_code=reason_code, returned_on=returned_on,
                     updated_at=clock.now())
             .where(PaymentOrder.id == order_id,
                    PaymentOrder.settlement.in_([Settlement.IN_FILE, Settlement.SETTLED]))
             .execute())
    if moved:
        return True
    order = _current(order_id)
    if order.settlement == Settlement.RETURNED:
        return False
    raise Conflict("the payment order never went to the bank", paymentOrderId=order_id,
                   reason="payment_order_unsent")
