"""Shape of a supplier payout (spec C)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend.billing.models import PaymentMethod, Settlement
from schemas.billing.invoices import MoneyMovedOut
from schemas.common import UtcDateTime, enum_of


class PayoutIn(Schema):
    reason = fields.String(validate=validate.Length(min=1, max=2000), metadata={
        "description": "pays before the distributor accepted its self-billed invoice: why (audited)"})


class PayoutOut(MoneyMovedOut):
    """`backend.billing.payouts.PaidOut`."""

    reservationId = fields.String(attribute="reservation_id", required=True)
    paymentOrderId = fields.String(attribute="payment_order_id", required=True, allow_none=True,
                                   metadata={"description": "null when the distributor's debt takes all of it"})
    invoiceNumber = fields.String(attribute="invoice_number", required=True,
                                  metadata={"description": "the self-billed invoice paid"})
    amountExclTaxCents = fields.Integer(attribute="amount_excl_tax_cents", required=True)
    amountCents = fields.Integer(attribute="amount_cents", required=True,
                                 metadata={"description": "the payment order, including VAT"})
    deductedCents = fields.Integer(attribute="deducted_cents", required=True, metadata={
        "description": "what the distributor owed back (supplier credit notes after an earlier payout), kept back, "
                       "including VAT"})
    organizationId = fields.String(attribute="organization_id", required=True,
                                   metadata={"description": "the distributor paid"})


class WaitingItemOut(Schema):
    """`backend.billing.payouts.Waiting`."""

    reservationId = fields.String(attribute="reservation_id", required=True)
    saleInvoiceNumber = fields.String(attribute="sale_invoice_number", required=True)
    selfBilledInvoiceNumber = fields.String(attribute="self_billed_invoice_number", allow_none=True)
    distributorOrganizationId = fields.String(attribute="distributor_organization_id", allow_none=True)
    paymentOrderId = fields.String(attribute="payment_order_id", required=True,
                                   metadata={"description": "the customer's collection"})
    method = fields.String(required=True, metadata=enum_of(PaymentMethod))
    settlement = fields.String(required=True, metadata=enum_of(Settlement))
    amountCents = fields.Integer(attribute="amount_cents", required=True, metadata={"description": "including VAT"})
    collectedAt = UtcDateTime(attribute="collected_at", required=True)
    ageDays = fields.Integer(attribute="age_days", required=True,
                             metadata={"description": "whole days since the collection"})


class WaitingOut(Schema):
    items = fields.List(fields.Nested(WaitingItemOut), required=True)
