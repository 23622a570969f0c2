"""Shape of the overdue bank transfers (docs/bank.md "Overdue transfers")."""

from __future__ import annotations

from marshmallow import Schema, fields

from schemas.common import UtcDateTime, page_of


class OverdueOut(Schema):
    """`backend.billing.bank.overdue.Overdue`."""

    paymentOrderId = fields.String(attribute="payment_order_id", required=True)
    organizationId = fields.String(attribute="organization_id", required=True)
    organizationName = fields.String(attribute="organization_name", required=True)
    invoiceNumber = fields.String(attribute="invoice_number", required=True)
    amountCents = fields.Integer(attribute="amount_cents", required=True)
    dueAt = UtcDateTime(attribute="due_at", required=True)
    daysOverdue = fields.Integer(attribute="days_overdue", required=True)
    remindedAt = UtcDateTime(attribute="reminded_at", required=True, allow_none=True,
                             metadata={"description": "when the one reminder e-mail was queued"})


OverduePage = page_of(OverdueOut, "OverduePage")
