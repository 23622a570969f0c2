"""Shapes of bank statements in and the unmatched queue (API.md "The bank", docs/bank.md)."""

from __future__ import annotations

from marshmallow import EXCLUDE, Schema, fields, validate

from backend import clock
from backend.billing.accounting.entries import paris_day
from schemas.common import PageQuery, UtcDateTime, enum_of, page_of


class BankPageQuery(PageQuery):
    """`page` and `pageSize` of the bank's lists, in their one order (no search, no sort)."""

    class Meta:
        exclude = ("search", "sortBy", "sortDir")
        unknown = EXCLUDE


class StatementOut(Schema):
    """`backend.billing.bank.statements.Imported`."""

    id = fields.String(required=True)
    lines = fields.Integer(required=True, metadata={"description": "booked lines of the document"})
    matched = fields.Integer(required=True, metadata={"description": "lines that settled a payment order"})
    returned = fields.Integer(required=True, metadata={"description": "returned direct debits"})
    unmatched = fields.Integer(required=True, metadata={"description": "lines waiting in the unmatched queue"})


class StatementAnswer(Schema):
    statement = fields.Nested(StatementOut, required=True)


class BankLineOut(Schema):
    """A line of a bank statement (`billing_bank_line`)."""

    id = fields.String(required=True)
    statementId = fields.String(attribute="statement_id", required=True)
    direction = fields.String(required=True, metadata=enum_of(("credit", "debit")))
    amountCents = fields.Integer(attribute="amount_cents", required=True)
    bookingDate = fields.Date(attribute="booking_date", required=True)
    endToEndId = fields.String(attribute="end_to_end_id", required=True, allow_none=True)
    remittance = fields.String(required=True, allow_none=True)
    counterpartyName = fields.String(attribute="counterparty_name", required=True, allow_none=True)
    counterpartyIban = fields.String(attribute="counterparty_iban", required=True, allow_none=True)
    returnCode = fields.String(attribute="return_code", required=True, allow_none=True,
                               metadata={"description": "ISO 20022 reason of a returned direct debit"})
    state = fields.String(required=True, metadata=enum_of(("matched", "returned", "unmatched")))
    paymentOrderId = fields.String(attribute="payment_order_id", required=True, allow_none=True)
    matchedAt = UtcDateTime(attribute="matched_at", required=True, allow_none=True)
    ageDays = fields.Function(lambda line: (paris_day(clock.now()) - line.booking_date).days, dump_only=True,
                              metadata={"type": "integer", "description": "days since its booking (Paris)"})


UnmatchedOut = page_of(BankLineOut, "BankLinePage")


class MatchIn(Schema):
    paymentOrderId = fields.String(required=True, validate=lambda value: 0 < len(value) <= 36)


class MatchAnswer(Schema):
    line = fields.Nested(BankLineOut, required=True)


class LineResolveIn(Schema):
    how = fields.String(required=True, validate=validate.OneOf(("refunded", "applied")),
                        metadata=enum_of(("refunded", "applied")))
    note = fields.String(required=True, validate=validate.Length(min=1, max=1000))
    otherLineId = fields.String(load_default=None, validate=validate.Length(min=1, max=36),
                                metadata={"description": "refunded: the bank's line that paid the money back"})
    invoiceNumber = fields.String(load_default=None, validate=validate.Length(min=1, max=80),
                                  metadata={"description": "applied: the sale invoice the credit pays"})


class LineResolvedOut(Schema):
    lineId = fields.String(attribute="line_id", required=True)
    how = fields.String(required=True, metadata=enum_of(("refunded", "applied")))
    otherLineId = fields.String(attribute="other_line_id", required=True, allow_none=True)
    invoiceNumber = fields.String(attribute="invoice_number", required=True, allow_none=True)


class LineResolveAnswer(Schema):
    resolution = fields.Nested(LineResolvedOut, required=True)
