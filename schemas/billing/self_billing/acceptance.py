"""Shapes of the distributor's acceptance or contest of a self-billed invoice, and of an admin's
resolution of a contest."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend.billing.models import AcceptanceStatus, ContestResolution
from schemas.common import ListQuery, UtcDateTime, enum_of, sort_by

TEXT = validate.Length(min=1, max=2000)
CONTESTED_SORTS = ("contestedAt", "invoiceNumber")


class ContestIn(Schema):
    reason = fields.String(required=True, validate=TEXT, metadata={"description": "why the invoice is contested"})


class ResolveIn(Schema):
    decision = fields.String(required=True, validate=validate.OneOf(["reject", "adjust"]))
    note = fields.String(required=True, validate=TEXT, metadata={
        "description": "the admin's reason: e-mailed to the distributor on a rejection, printed as the reason of the "
                       "supplier credit note on an adjustment; audited"})
    amountCents = fields.Integer(load_default=None, allow_none=True, validate=validate.Range(min=1), metadata={
        "description": "adjust only (required then): the corrected invoice's amount excluding tax, at most the store "
                       "share of what the customer paid (409 `amount_above_store_share`, `details.maximumCents`)"})


class ResolutionOut(Schema):
    decision = fields.String(required=True, metadata=enum_of(ContestResolution))
    note = fields.String(required=True)
    resolvedAt = UtcDateTime(attribute="resolved_at", required=True)
    resolvedByUserId = fields.String(attribute="resolved_by_user_id", allow_none=True, required=True)
    correctedInvoiceNumber = fields.String(attribute="corrected_invoice_number", allow_none=True, required=True)


class ContestOut(Schema):
    reason = fields.String(required=True)
    contestedAt = UtcDateTime(attribute="contested_at", required=True)
    contestedByUserId = fields.String(attribute="contested_by_user_id", allow_none=True, required=True)
    resolution = fields.Nested(ResolutionOut, allow_none=True, required=True,
                               metadata={"description": "null while the contest waits for an admin"})


class AcceptanceOut(Schema):
    """`backend.billing.self_billing.acceptance.AcceptanceView`."""

    invoiceNumber = fields.String(attribute="invoice_number", required=True)
    status = fields.String(required=True, metadata=enum_of(AcceptanceStatus))
    emailedAt = UtcDateTime(attribute="emailed_at", allow_none=True, required=True,
                            metadata={"description": "first delivery of the invoice's e-mail; null until then"})
    deadline = UtcDateTime(allow_none=True, required=True, metadata={
        "description": "30 days after emailedAt: the end of the contestation delay and the moment of tacit "
                       "acceptance; null while the invoice was not e-mailed (it cannot be tacitly accepted)"})
    decidedAt = UtcDateTime(attribute="decided_at", allow_none=True, required=True,
                            metadata={"description": "when it was accepted, expressly or tacitly"})
    decidedByUserId = fields.String(attribute="decided_by_user_id", allow_none=True, required=True,
                                    metadata={"description": "null for a tacit acceptance"})
    contest = fields.Nested(ContestOut, allow_none=True, required=True)


class ResolvedOut(Schema):
    """`backend.billing.self_billing.resolution.Resolved`."""

    acceptance = fields.Nested(AcceptanceOut, required=True)
    creditNoteNumber = fields.String(attribute="credit_note_number", allow_none=True, required=True, metadata={
        "description": "adjust: the supplier credit note of the contested invoice"})
    correctedInvoiceNumber = fields.String(attribute="corrected_invoice_number", allow_none=True, required=True,
                                           metadata={"description": "adjust: the corrected self-billed invoice"})


class ContestedQuery(ListQuery):
    sortBy = sort_by(CONTESTED_SORTS, "contestedAt")


class ContestedOut(Schema):
    """`backend.billing.self_billing.resolution.ContestedItem`."""

    invoiceNumber = fields.String(attribute="invoice_number", required=True)
    organizationId = fields.String(attribute="organization_id", required=True)
    reservationId = fields.String(attribute="reservation_id", allow_none=True, required=True)
    amountExclTaxCents = fields.Integer(attribute="amount_excl_tax_cents", required=True)
    reason = fields.String(attribute="contest_reason", required=True)
    contestedAt = UtcDateTime(attribute="contested_at", required=True)
