"""Shapes of a reservation's collection and financial summary (Specification C "Collection and refunds")."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend.billing.models import FinancialStatus, PaymentKind, PaymentMethod, PaymentStatus, Settlement
from schemas.billing.invoices import METHOD, InvoiceOut, MoneyMovedOut
from schemas.common import UtcDateTime, enum_of


class CollectIn(Schema):
    paymentMethod = METHOD


class CollectTotalIn(Schema):
    """A reservation total's collection: without `paymentMethod`, the organization's default."""

    paymentMethod = fields.String(load_default=None, validate=validate.OneOf([m.value for m in PaymentMethod]),
                                  metadata={"enum": [m.value for m in PaymentMethod], "description": (
                                      "absent: `sepa_dd` under the organization's active SEPA mandate, else "
                                      "`bank_transfer`; `bank_transfer` may be asked for even with a mandate")})


class CollectOut(MoneyMovedOut):
    """`backend.billing.collection.collect.Collected`."""

    reservationId = fields.String(attribute="reservation_id", required=True)
    invoiceNumber = fields.String(attribute="invoice_number", required=True)


class AmountsOut(Schema):
    storeBaseAmountCents = fields.Integer(attribute="store_base_amount_cents", required=True)
    platformCommissionAmountCents = fields.Integer(attribute="platform_commission_amount_cents", required=True)
    industrialTotalAmountCents = fields.Integer(attribute="industrial_total_amount_cents", required=True,
                                                metadata={"description": "base + commission, HT"})
    commissionRateBps = fields.Integer(attribute="commission_rate_bps", required=True)


class PaymentOrderOut(Schema):
    id = fields.String(attribute="order.id", required=True)
    kind = fields.String(attribute="order.kind", required=True, metadata=enum_of(PaymentKind))
    method = fields.String(attribute="order.method", required=True, metadata=enum_of(PaymentMethod))
    status = fields.String(attribute="order.status", required=True, metadata=enum_of(PaymentStatus))
    amountCents = fields.Integer(attribute="order.amount_cents", required=True,
                                 metadata={"description": "including VAT"})
    currency = fields.String(attribute="order.currency", required=True)
    mandateRef = fields.String(attribute="mandate_ref", allow_none=True,
                               metadata={"description": "shown to the industrial and admins"})
    createdAt = UtcDateTime(attribute="order.created_at", required=True)
    paidAt = UtcDateTime(attribute="order.paid_at", allow_none=True)
    settlement = fields.String(attribute="order.settlement", required=True, metadata={
        **enum_of(Settlement), "description": "the bank's view beside spec C's status: in no bank file yet, in a live "
                                              "file, booked on a statement, or returned by the bank"})
    settledOn = fields.Date(attribute="order.settled_on", allow_none=True,
                            metadata={"description": "the booking date of the statement line that settled it"})
    failureCode = fields.String(attribute="order.failure_code", allow_none=True, metadata={
        "description": "why it failed: for a direct debit the bank returned, its ISO 20022 reason (AM04, MD06...)"})


class SummaryOut(Schema):
    """`backend.billing.queries.ReservationSummary`."""

    reservationId = fields.String(attribute="reservation_id", required=True)
    billingModel = fields.String(attribute="billing_model", required=True,
                                 metadata={"enum": ["legacy_mandate", "principal_seller"]})
    financialStatus = fields.String(attribute="financial_status", required=True, metadata=enum_of(FinancialStatus))
    amounts = fields.Nested(AmountsOut, required=True)
    paymentOrders = fields.List(fields.Nested(PaymentOrderOut), attribute="payment_orders", required=True)
    invoices = fields.List(fields.Nested(InvoiceOut), required=True)
    refundedCents = fields.Integer(attribute="refunded_cents", required=True, metadata={
        "description": "money given back (refunds, customer credit repaid), excluding tax"})
    customerCreditCents = fields.Integer(attribute="customer_credit_cents", required=True, metadata={
        "description": "what the customer is owed, including VAT: credit notes that moved no money, not yet repaid "
                       "(the refund route repays it)"})
