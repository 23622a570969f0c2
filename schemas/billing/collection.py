"""Shapes of a reservation's collection and financial summary (Specification C "Collection and refunds")."""

from __future__ import annotations

from marshmallow import Schema, fields

from backend.billing.models import FinancialStatus, PaymentKind, PaymentMethod, PaymentStatus
from schemas.billing.invoices import METHOD, InvoiceOut
from schemas.common import enum_of


class CollectIn(Schema):
    paymentMethod = METHOD


class CollectOut(Schema):
    reservationId = fields.String(required=True)
    paymentOrderId = fields.String(required=True)
    invoiceNumber = fields.String(required=True)
    financialStatus = fields.String(required=True, metadata=enum_of(FinancialStatus))
    paymentStatus = fields.String(required=True, metadata=enum_of(PaymentStatus))
    idempotent = fields.Boolean(required=True)


class AmountsOut(Schema):
    storeBaseAmountCents = fields.Integer(required=True)
    platformCommissionAmountCents = fields.Integer(required=True)
    industrialTotalAmountCents = fields.Integer(required=True, metadata={"description": "base + commission, HT"})
    commissionRateBps = fields.Integer(required=True)


class PaymentOrderOut(Schema):
    id = fields.String(required=True)
    kind = fields.String(required=True, metadata=enum_of(PaymentKind))
    method = fields.String(required=True, metadata=enum_of(PaymentMethod))
    status = fields.String(required=True, metadata=enum_of(PaymentStatus))
    amountCents = fields.Integer(required=True, metadata={"description": "including VAT"})
    currency = fields.String(required=True)
    mandateRef = fields.String(allow_none=True, metadata={"description": "shown to the industrial and admins"})
    createdAt = fields.String(required=True, metadata={"format": "date-time"})
    paidAt = fields.String(allow_none=True, metadata={"format": "date-time"})


class SummaryOut(Schema):
    reservationId = fields.String(required=True)
    billingModel = fields.String(required=True, metadata={"enum": ["legacy_mandate", "principal_seller"]})
    financialStatus = fields.String(required=True, metadata=enum_of(FinancialStatus))
    amounts = fields.Nested(AmountsOut, required=True)
    paymentOrders = fields.List(fields.Nested(PaymentOrderOut), required=True)
    invoices = fields.List(fields.Nested(InvoiceOut), required=True)
    refundedCents = fields.Integer(required=True, metadata={
        "description": "money given back (refunds, customer credit repaid), excluding tax"})
    customerCreditCents = fields.Integer(required=True, metadata={
        "description": "what the customer is owed, including VAT: credit notes that moved no money, not yet repaid "
                       "(the refund route repays it)"})
