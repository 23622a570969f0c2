"""An ISO 20022 payment initiation made with the `sepaxml` package, checked before it is kept.

`sepaxml` writes the message and validates it against the ISO 20022 schema it ships
(pain.008.001.08, pain.001.001.09); this module then reads the group header back and refuses a
message whose transaction count or control sum is not the sum of its entries (the file says what
the database records, to the cent).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date, datetime

from lxml import etree
from sepaxml.validation import ValidationError as SchemaInvalid

from backend import clock
from backend.billing.accounting.entries import PARIS
from backend.billing.models import BankFileKind
from backend.errors import Conflict

SCHEMAS = {BankFileKind.DIRECT_DEBIT: "pain.008.001.08", BankFileKind.CREDIT_TRANSFER: "pain.001.001.09"}
# Our own output read back: no DTD, no entity, no network, whatever it held.
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


@dataclass(frozen=True)
class Entry:
    """One payment order in a message."""

    payment_order_id: str
    amount_cents: int
    sequence_type: str | None = None  # FRST | RCUR, direct debits only


@dataclass(frozen=True)
class Message:
    kind: BankFileKind
    message_id: str
    requested_on: date
    entries: tuple[Entry, ...]
    xml: bytes

    @property
    def count(self) -> int:
        return len(self.entries)

    @property
    def control_sum_cents(self) -> int:
        return sum(entry.amount_cents for entry in self.entries)


def cents_text(cents: int) -> str:
    """An amount as ISO 20022 writes it (`1440.00`), from integer cents."""
    return f"{cents // 100}.{cents % 100:02d}"


def message_id(moment: datetime) -> str:
    """A unique `MsgId`: the moment in Paris on a 24-hour clock (`YYYYMMDDHHMMSS`), then 12 random
    hexadecimal digits. sepaxml's own id writes the hour on a 12-hour clock, so a file made at 14:58
    would carry 02:58 and sort before the morning's files."""
    return f"{moment.astimezone(PARIS):%Y%m%d%H%M%S}-{uuid.uuid4().hex[:12]}"


def finish(kind: BankFileKind, document, *, requested_on: date, entries: list[Entry]) -> Message:
    """The validated XML of `document` (a `sepaxml.SepaDD` or `SepaTransfer` holding `entries`),
    under the message id `message_id` gives it now (in place of the one sepaxml wrote in its
    header when the document was made: same length, same characters, so the message stays valid)."""
    try:
        xml = document.export(validate=True)
    except SchemaInvalid as error:
        raise Conflict(f"the {SCHEMAS[kind]} message does not validate against its ISO 20022 schema: "
                       f"{error.__cause__ or error}", reason="schema_invalid") from error
    ours = message_id(clock.now())
    written = f"<MsgId>{document.msg_id}</MsgId>".encode()
    if xml.count(written) != 1:
        raise Conflict(f"the {SCHEMAS[kind]} message does not carry its message id once", reason="schema_invalid")
    message = Message(kind, ours, requested_on, tuple(entries), xml.replace(written, f"<MsgId>{ours}</MsgId>".encode()))
    header = etree.fromstring(xml, _PARSER)[0].find("{*}GrpHdr")
    said = (header.findtext("{*}NbOfTxs"), header.findtext("{*}CtrlSum"))
    if said != (str(message.count), cents_text(message.control_sum_cents)):
        raise Conflict(f"the {SCHEMAS[kind]} message says {said[0]} transactions for {said[1]}, its payment "
                       f"orders {message.count} for {cents_text(message.control_sum_cents)}",
                       reason="control_sum_mismatch")
    return message
