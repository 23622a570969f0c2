"""Shapes of invoices, refunds and credit notes (Specification C "Collection and refunds", "Invoices")."""

from __future__ import annotations

from marshmallow import EXCLUDE, Schema, fields, validate

from backend.billing.models import (
    FinancialStatus,
    InvoiceKind,
    InvoiceStatus,
    PaymentMethod,
    PaymentStatus,
)
from backend.billing.queries import LIST_DEFAULT, LIST_MAX
from schemas.common import QueryList, UtcDateTime, enum_of

METHOD = fields.String(required=True, validate=validate.OneOf([m.value for m in PaymentMethod]),
                       metadata={"enum": [m.value for m in PaymentMethod]})
REASON = fields.String(required=True, validate=validate.Length(min=1, max=2000))


class RefundIn(Schema):
    amountCents = fields.Integer(required=True, strict=True, validate=validate.Range(min=1),
                                 metadata={"description": "excluding tax, like every stored invoice amount"})
    reason = REASON
    paymentMethod = METHOD


class MoneyMovedOut(Schema):
    """What every answer of a route moving money says: its payment order, the statuses it left,
    whether it is a replay (`Idempotency-Key`)."""

    paymentOrderId = fields.String(attribute="payment_order_id", required=True)
    financialStatus = fields.String(attribute="financial_status", required=True, metadata=enum_of(FinancialStatus))
    paymentStatus = fields.String(attribute="payment_status", required=True, metadata=enum_of(PaymentStatus))
    idempotent = fields.Boolean(required=True)


class RefundOut(MoneyMovedOut):
    """`backend.billing.corrections.Refunded`."""

    invoiceNumber = fields.String(attribute="invoice_number", required=True)
    creditNoteNumber = fields.String(attribute="credit_note_number", required=True)
    refundedCents = fields.Integer(attribute="refunded_cents", required=True, metadata={"description": "excluding tax"})
    amountInclTaxCents = fields.Integer(attribute="amount_incl_tax_cents", required=True,
                                        metadata={"description": "the refund payment order"})
    remainingCents = fields.Integer(attribute="remaining_cents", required=True,
                                    metadata={"description": "left to refund, excluding tax"})


class CreditNoteIn(Schema):
    reason = REASON


class CreditNoteOut(Schema):
    """`backend.billing.corrections.Credited`."""

    invoiceNumber = fields.String(attribute="invoice_number", required=True)
    creditNoteNumber = fields.String(attribute="credit_note_number", required=True)
    creditedCents = fields.Integer(attribute="credited_cents", required=True, metadata={"description": "excluding tax"})
    invoiceStatus = fields.String(attribute="invoice_status", required=True, metadata=enum_of(InvoiceStatus))


class PartyOut(Schema):
    organizationId = fields.String(attribute="organization_id", allow_none=True,
                                   metadata={"description": "null: the platform"})
    legalName = fields.String(attribute="legal_name", required=True)


class InvoiceOut(Schema):
    """The Invoice fields of Specification C (`backend.billing.queries.InvoiceItem`); `hasPdf`,
    never the storage key."""

    invoiceNumber = fields.String(attribute="invoice.number", required=True)
    kind = fields.String(attribute="invoice.kind", required=True, metadata=enum_of(InvoiceKind))
    status = fields.String(attribute="invoice.status", required=True, metadata=enum_of(InvoiceStatus))
    amountExclTaxCents = fields.Integer(attribute="amounts.amount_excl_tax_cents", required=True)
    vatRatePercent = fields.Float(attribute="amounts.vat_rate_percent", required=True,
                                  metadata={"description": "frozen when the invoice was issued"})
    vatAmountCents = fields.Integer(attribute="amounts.vat_amount_cents", required=True,
                                    metadata={"description": "computed at read time"})
    amountInclTaxCents = fields.Integer(attribute="amounts.amount_incl_tax_cents", required=True)
    currency = fields.String(attribute="invoice.currency", required=True)
    issuedAt = UtcDateTime(attribute="invoice.issued_at", required=True)
    dueAt = UtcDateTime(attribute="invoice.due_at", required=True)
    hasPdf = fields.Boolean(attribute="invoice.has_pdf", required=True)
    reservationId = fields.String(attribute="invoice.reservation_id", allow_none=True)
    creditedInvoiceNumber = fields.String(attribute="credited_invoice_number", allow_none=True,
                                          metadata={"description": "credit notes: the invoice"})
    issuer = fields.Nested(PartyOut, required=True)
    customer = fields.Nested(PartyOut, required=True)


class InvoicesQuery(Schema):
    class Meta:
        unknown = EXCLUDE

    limit = fields.Integer(load_default=LIST_DEFAULT, validate=validate.Range(min=1, max=LIST_MAX))
    kind = QueryList(fields.String(validate=validate.Length(max=60)), load_default=list,
                       metadata={"description": "repeatable; unknown values ignored; empty means all",
                                 **enum_of(InvoiceKind)})


class InvoicesOut(Schema):
    items = fields.List(fields.Nested(InvoiceOut), required=True)
