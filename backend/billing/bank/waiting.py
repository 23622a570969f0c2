"""The statement lines nothing matched, settled by an admin otherwise than by a match with a
payment order (docs/bank.md, "The unmatched queue"). Each waits in `471` from its import
(`accounting.cash`); a resolution takes it out:

- `refunded`: the money went back to the payer. The credit is paired with the bank's debit line
  that paid it back (unmatched too, the same amount, the other direction): their two `471`
  postings cancel out, and both lines leave the queue.
- `applied`: a credit applied to a customer's sale invoice (a payer who gave no reference, a
  second payment kept against another invoice): `471` against the customer's `411`, lettered with
  that invoice.

A line is resolved once (the table's primary key), under the lock imports and matches take, in
one transaction with its posting.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend import clock
from backend.billing.accounting import cash
from backend.billing.bank import matching
from backend.billing.bank.statements import IMPORT_LOCK
from backend.billing.models import BankLine, Invoice, InvoiceKind
from backend.db import database, transaction
from backend.errors import Conflict, NotFound, ValidationError

REFUNDED, APPLIED = "refunded", "applied"


@dataclass(frozen=True)
class Resolved:
    line_id: str
    how: str
    other_line_id: str | None
    invoice_number: str | None


def resolve_line(line_id: str, *, how: str, note: str, user_id: str | None, other_line_id: str | None = None,
                 invoice_number: str | None = None) -> Resolved:
    """Record how the waiting line `line_id` was settled; 404 for an unknown line, paired line or
    invoice; 409 `line_matched` (matched or resolved already) or `line_mismatch` (the pair or the
    invoice does not fit the line)."""
    note = (note or "").strip()
    if not note:
        raise ValidationError("say how the line was settled", fields={"note": ["required"]})
    with transaction():
        database.execute_sql("SELECT pg_advisory_xact_lock(%s)", (IMPORT_LOCK,))
        line = _waiting(line_id)
        if how == REFUNDED:
            if not other_line_id:
                raise ValidationError("a refund names the bank's line that paid it back (otherLineId)",
                                      reason="other_line_missing")
            other = _waiting(other_line_id)
            if other.id == line.id or other.direction == line.direction or other.amount_cents != line.amount_cents:
                raise Conflict("the two lines are not a payment and its refund (amounts or directions differ)",
                               reason="line_mismatch")
            _record(line.id, REFUNDED, note, user_id, other_line_id=other.id)
            _record(other.id, REFUNDED, note, user_id, other_line_id=line.id)
            return Resolved(line.id, REFUNDED, other.id, None)
        if how != APPLIED:
            raise ValidationError("a line is refunded or applied", fields={"how": ["refunded or applied"]})
        invoice = Invoice.get_or_none(Invoice.number == (invoice_number or ""))
        if invoice is None:
            raise NotFound("invoice not found", invoiceNumber=invoice_number)
        if line.direction != "credit" or invoice.kind != InvoiceKind.PLATFORM_SALE:
            raise Conflict("only a credit is applied, and to a sale invoice", reason="line_mismatch")
        cash.post_applied(cash.WaitingLine(line.id, True, line.amount_cents, line.booking_date, line.entry_key[:40]),
                          invoice)
        _record(line.id, APPLIED, note, user_id, invoice_id=invoice.id)
        return Resolved(line.id, APPLIED, None, invoice.number)


def _waiting(line_id: str) -> BankLine:
    line = BankLine.select().where(BankLine.id == line_id).for_update().first()
    if line is None:
        raise NotFound("bank statement line not found", lineId=line_id)
    resolved = database.execute_sql("SELECT 1 FROM billing_bank_line_resolution WHERE line_id = %s",
                                    (line_id,)).fetchone()
    if line.state != matching.UNMATCHED or resolved:
        raise Conflict("the line is matched or settled already", reason="line_matched", lineId=line_id)
    return line


def _record(line_id: str, how: str, note: str, user_id: str | None, *, other_line_id: str | None = None,
            invoice_id: str | None = None) -> None:
    database.execute_sql(
        "INSERT INTO billing_bank_line_resolution (line_id, how, other_line_id, invoice_id, note, user_id,"
        " created_at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
        (line_id, how, other_line_id, invoice_id, note, user_id, clock.now()))
