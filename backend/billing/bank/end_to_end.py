"""The end-to-end id of a payment order in the bank's messages: its id without the dashes.

ISO 20022's `EndToEndId` is at most 35 characters; a payment order's id is a UUID, 36 with its
dashes, 32 hexadecimal digits without. The bank hands the id back unchanged in its statements
(camt.053/054 `Refs/EndToEndId`), where `order_id_of` reads it back.
"""

from __future__ import annotations

import uuid


def end_to_end_id(order_id: str) -> str:
    return uuid.UUID(order_id).hex


def order_id_of(end_to_end: str) -> str | None:
    """The payment order id an end-to-end id names, or None when it names none of ours (another
    creditor's reference, `NOTPROVIDED`...)."""
    text = end_to_end.strip()
    if len(text) != 32:
        return None
    try:
        return str(uuid.UUID(hex=text))
    except ValueError:
        return None
