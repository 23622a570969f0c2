"""Shape of a supplier payout (spec C)."""

from __future__ import annotations

from marshmallow import Schema, fields

from backend.billing.models import FinancialStatus, PaymentStatus
from schemas.common import enum_of


class PayoutOut(Schema):
    reservationId = fields.String(required=True)
    paymentOrderId = fields.String(required=True, allow_none=True,
                                   metadata={"description": "null when the distributor's debt takes all of it"})
    invoiceNumber = fields.String(required=True, metadata={"description": "the self-billed invoice paid"})
    organizationId = fields.String(required=True, metadata={"description": "the distributor paid"})
    amountExclTaxCents = fields.Integer(required=True)
    amountCents = fields.Integer(required=True, metadata={"description": "the payment order, including VAT"})
    deductedCents = fields.Integer(required=True, metadata={
        "description": "what the distributor owed back (supplier credit notes after an earlier payout), kept back, "
                       "including VAT"})
    financialStatus = fields.String(required=True, metadata=enum_of(FinancialStatus))
    paymentStatus = fields.String(required=True, metadata=enum_of(PaymentStatus))
    idempotent = fields.Boolean(required=True)
