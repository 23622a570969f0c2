"""Shapes of bank statements in and the unmatched queue (API.md "The bank", docs/bank.md)."""

from __future__ import annotations

from marshmallow import EXCLUDE, Schema, fields

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


UnmatchedOut = page_of(BankLineOut, "BankLinePage")


class MatchIn(Schema):
    paymentOrderId = fields.String(required=True, validate=lambda value: 0 < len(value) <= 36)


class MatchAnswer(Schema):
    line = fields.Nested(BankLineOut, required=True)
