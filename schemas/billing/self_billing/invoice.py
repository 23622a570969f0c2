"""Shapes of the manual self-billing catch-up (spec C)."""

from __future__ import annotations

from marshmallow import EXCLUDE, Schema, fields, validate

from backend.billing.models import FinancialStatus
from schemas.billing.invoices import InvoiceOut
from schemas.common import enum_of


class CatchUpQuery(Schema):
    class Meta:
        unknown = EXCLUDE

    force = fields.Boolean(load_default=False, truthy={"true"}, falsy={"false"},
                           metadata={"description": "`true` bypasses the mandate and incident gates (audited)"})


class CatchUpIn(Schema):
    reason = fields.String(validate=validate.Length(min=1, max=2000), metadata={
        "description": "required with `force=true` (400 without): written to the audit entry and the warning"})


class SelfBillingOut(Schema):
    """`backend.billing.self_billing.invoice.CatchUp`."""

    reservationId = fields.String(attribute="reservation_id", required=True)
    invoiceNumber = fields.String(attribute="invoice.invoice.number", required=True)
    invoice = fields.Nested(InvoiceOut, required=True)
    financialStatus = fields.String(attribute="financial_status", required=True, metadata=enum_of(FinancialStatus))
    warnings = fields.List(fields.String(metadata=enum_of(("forced_without_mandate", "forced_with_open_incident"))),
                           required=True)
    idempotent = fields.Boolean(required=True, metadata={"description": "true: the reservation was self-billed before"})
