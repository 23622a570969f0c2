"""E-invoice transmissions as the admin reads them, and the reconciliation snapshot (spec C)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend.einvoicing import reform_statuses
from backend.einvoicing.status import DocumentKind, FlowType, ProviderStatus, TransmissionStatus
from backend.einvoicing.views import SORTS as TRANSMISSION_SORTS
from schemas.common import PageQuery, QueryList, UtcDateTime, enum_of, open_values, page_of, sort_by

STATUSES = [s.value for s in TransmissionStatus]


class TransmissionsQuery(PageQuery):
    sortBy = sort_by(TRANSMISSION_SORTS, "createdAt")
    # `?status=sent` and `?status=sent&status=failed` both load as lists (QueryList)
    status = QueryList(fields.String(validate=validate.OneOf(STATUSES)), load_default=list)
    flowType = QueryList(fields.String(validate=validate.OneOf([f.value for f in FlowType])), load_default=list)
    documentKind = QueryList(fields.String(validate=validate.OneOf([k.value for k in DocumentKind])),
                             load_default=list)
    sortDir = fields.String(load_default="desc", validate=validate.OneOf(["asc", "desc"]))
    lifecycleCode = QueryList(fields.Integer(validate=validate.OneOf(sorted(reform_statuses.LABELS))),
                              load_default=list, metadata={"description": "the latest lifecycle code (repeatable)"})
    attention = fields.Boolean(load_default=False, metadata={
        "description": "only those whose latest code is 207, 208, 210 or 213 and whose invoice is not yet "
                       "credited in full"})


class LifecycleOut(Schema):
    code = fields.Integer(required=True, validate=validate.OneOf(sorted(reform_statuses.LABELS)))
    label = fields.String(required=True, metadata={"description": "the reform's label (Déposée ... Rejetée)"})
    at = UtcDateTime(required=True)
    reason = fields.String(allow_none=True)


class TransmissionOut(Schema):
    id = fields.String(required=True)
    invoiceNumber = fields.String(attribute="invoice_number", required=True,
                                  metadata={"description": "the invoice's number (its id)"})
    invoiceKind = fields.String(attribute="invoice_kind", allow_none=True)
    documentKind = fields.String(attribute="document_kind", required=True,
                                 validate=validate.OneOf([k.value for k in DocumentKind]))
    flowType = fields.String(attribute="flow_type", required=True, validate=validate.OneOf([f.value for f in FlowType]))
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    providerStatus = fields.String(attribute="provider_status", allow_none=True,
                                   validate=validate.OneOf([p.value for p in ProviderStatus]))
    providerFlowId = fields.String(attribute="provider_flow_id", allow_none=True)
    operatorStatus = fields.String(attribute="operator_status", allow_none=True,
                                   metadata=open_values("the operator's last word, as answered"))
    documentPdfKey = fields.String(attribute="document_pdf_key", allow_none=True)
    amountInclTaxCents = fields.Integer(attribute="amount_incl_tax_cents", required=True)
    idempotencyKey = fields.String(attribute="idempotency_key", required=True,
                                   metadata={"description": "<invoiceNumber>:<documentKind>:<flowType>"})
    dispatchAttempts = fields.Integer(attribute="dispatch_attempts", required=True)
    lastErrorCode = fields.String(attribute="last_error_code", allow_none=True)
    lastErrorMessage = fields.String(attribute="last_error_message", allow_none=True)
    lastSyncedAt = UtcDateTime(attribute="last_synced_at", allow_none=True)
    createdAt = UtcDateTime(attribute="created_at", required=True)
    updatedAt = UtcDateTime(attribute="updated_at", required=True)
    statusChangedAt = UtcDateTime(attribute="status_changed_at", required=True)
    processingRule = fields.String(attribute="processing_rule", required=True,
                                   validate=validate.OneOf(["B2B", "B2BInt"]),
                                   metadata={"description": "XP Z12-013: B2B, or B2BInt for e-reporting"})
    buyerSiren = fields.String(attribute="buyer_siren", allow_none=True,
                               metadata={"description": "the frozen buyer's SIREN (its electronic address)"})
    nextDispatchAt = UtcDateTime(attribute="next_dispatch_at", allow_none=True, metadata={
        "description": "failed by a throttled or unavailable operator: dispatched again then, automatically"})
    lifecycle = fields.List(fields.Nested(LifecycleOut), metadata={
        "description": "the reform's lifecycle statuses, oldest first"})


class TransmissionEventOut(Schema):
    fromStatus = fields.String(attribute="from_status", allow_none=True, metadata=enum_of(TransmissionStatus))
    toStatus = fields.String(attribute="to_status", required=True, metadata=enum_of(TransmissionStatus))
    providerStatus = fields.String(attribute="provider_status", allow_none=True, metadata=enum_of(ProviderStatus))
    operatorStatus = fields.String(attribute="operator_status", allow_none=True,
                                   metadata=open_values("the operator's word, as answered"))
    operatorAnswer = fields.Raw(attribute="operator_answer", allow_none=True,
                                metadata={"description": "the operator's answer (JSON) that caused the change"})
    errorCode = fields.String(attribute="error_code", allow_none=True)
    errorMessage = fields.String(attribute="error_message", allow_none=True)
    trigger = fields.String(required=True, metadata={
        "description": "draft_created, dispatch, poll, callback, auto_retry, admin_retry or admin_resync"})
    actorUserId = fields.String(attribute="actor_user_id", allow_none=True)
    occurredAt = UtcDateTime(attribute="occurred_at", required=True)


class TransmissionDetailOut(TransmissionOut):
    history = fields.List(fields.Nested(TransmissionEventOut), required=True)


class AlertOut(Schema):
    name = fields.String(required=True, validate=validate.OneOf(
        ["discrepancy_rate", "provider_failed_backlog", "missing_transmission_backlog", "refused_backlog"]))
    value = fields.Integer(required=True)
    of = fields.Integer(metadata={"description": "discrepancy_rate: invoices in scope"})
    level = fields.String(required=True, validate=validate.OneOf(["ok", "warning", "critical"]))
    warningAt = fields.Integer()
    criticalAt = fields.Integer()
    warningAtBps = fields.Integer()
    criticalAtBps = fields.Integer()


class ReconciliationScopeOut(Schema):
    invoiceKinds = fields.List(fields.String(), required=True)
    selfBillingEnabled = fields.Boolean(required=True)


class PollingStateOut(Schema):
    enabled = fields.Boolean(required=True)
    intervalMs = fields.Integer(required=True)
    lastPassStartedAt = fields.String(allow_none=True)
    lastPassOutcome = fields.String(allow_none=True)
    inactive = fields.Boolean(required=True, metadata={"description": "enabled, and no pass for 30 min or more"})


class ReconciliationOut(Schema):
    generatedAt = fields.String(required=True)
    scope = fields.Nested(ReconciliationScopeOut, required=True)
    transmissionsByStatus = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True, metadata={
        "description": "domestic transmissions (processing rule B2B) per status"})
    eReportingByStatus = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True, metadata={
        "description": "e-reporting transmissions (eu_intra_b2b, export_b2b: processing rule B2BInt) per status"})
    invoicesInScope = fields.Integer(required=True)
    missingTransmission = fields.Integer(required=True, metadata={
        "description": "invoices in scope with no transmission 15 minutes after issue"})
    providerFailed = fields.Integer(required=True, metadata={
        "description": "transmissions needing an admin: failed with no automatic retry planned (an unknown "
                       "recipient apart) or rejected, while their invoice is not credited in full"})
    recipientUnknown = fields.Integer(required=True, metadata={
        "description": "failed with EINVOICE_RECIPIENT_UNKNOWN (the buyer's SIREN is not in the directory)"})
    refusedBacklog = fields.Integer(required=True, metadata={
        "description": "latest lifecycle code 210 Refusée or 213 Rejetée, invoice not credited in full"})
    discrepancyRateBps = fields.Integer(required=True, metadata={
        "description": "(missing + providerFailed) / invoicesInScope, basis points"})
    alerts = fields.List(fields.Nested(AlertOut), required=True)
    polling = fields.Nested(PollingStateOut, required=True)


TransmissionPage = page_of(TransmissionOut)
