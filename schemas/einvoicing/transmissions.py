"""E-invoice transmissions as the admin reads them, and the reconciliation snapshot (spec C)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend.clock import iso
from backend.einvoicing.models import Transmission, TransmissionEvent
from backend.einvoicing.status import DocumentKind, FlowType, ProviderStatus, TransmissionStatus
from schemas.common import PageQuery, QueryList, enveloped, page_of

STATUSES = [s.value for s in TransmissionStatus]


class TransmissionsQuery(PageQuery):
    # `?status=sent` and `?status=sent&status=failed` both load as lists (QueryList)
    status = QueryList(fields.String(validate=validate.OneOf(STATUSES)), load_default=list)
    flowType = QueryList(fields.String(validate=validate.OneOf([f.value for f in FlowType])), load_default=list)
    documentKind = QueryList(fields.String(validate=validate.OneOf([k.value for k in DocumentKind])),
                             load_default=list)
    sortDir = fields.String(load_default="desc", validate=validate.OneOf(["asc", "desc"]))


class TransmissionOut(Schema):
    id = fields.String(required=True)
    invoiceNumber = fields.String(required=True, metadata={"description": "the invoice's number (its id)"})
    invoiceKind = fields.String(allow_none=True)
    documentKind = fields.String(required=True, validate=validate.OneOf([k.value for k in DocumentKind]))
    flowType = fields.String(required=True, validate=validate.OneOf([f.value for f in FlowType]))
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    providerStatus = fields.String(allow_none=True, validate=validate.OneOf([p.value for p in ProviderStatus]))
    providerFlowId = fields.String(allow_none=True)
    operatorStatus = fields.String(allow_none=True, metadata={"description": "the operator's last word, as is"})
    documentPdfKey = fields.String(allow_none=True)
    amountInclTaxCents = fields.Integer(required=True)
    idempotencyKey = fields.String(required=True, metadata={"description": "<invoiceNumber>:<documentKind>:<flowType>"})
    dispatchAttempts = fields.Integer(required=True)
    lastErrorCode = fields.String(allow_none=True)
    lastErrorMessage = fields.String(allow_none=True)
    lastSyncedAt = fields.String(allow_none=True)
    createdAt = fields.String(required=True)
    updatedAt = fields.String(required=True)
    statusChangedAt = fields.String(required=True)


class TransmissionEventOut(Schema):
    fromStatus = fields.String(allow_none=True)
    toStatus = fields.String(required=True)
    providerStatus = fields.String(allow_none=True)
    operatorStatus = fields.String(allow_none=True)
    operatorAnswer = fields.Dict(allow_none=True)
    errorCode = fields.String(allow_none=True)
    errorMessage = fields.String(allow_none=True)
    trigger = fields.String(required=True, metadata={
        "description": "draft_created, dispatch, poll, admin_retry or admin_resync"})
    actorUserId = fields.String(allow_none=True)
    occurredAt = fields.String(required=True)


class TransmissionDetailOut(TransmissionOut):
    history = fields.List(fields.Nested(TransmissionEventOut), required=True)


class AlertOut(Schema):
    name = fields.String(required=True, validate=validate.OneOf(
        ["discrepancy_rate", "provider_failed_backlog", "missing_transmission_backlog"]))
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
    transmissionsByStatus = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True)
    invoicesInScope = fields.Integer(required=True)
    missingTransmission = fields.Integer(required=True, metadata={
        "description": "invoices in scope with no transmission 15 minutes after issue"})
    providerFailed = fields.Integer(required=True, metadata={"description": "transmissions failed or rejected"})
    discrepancyRateBps = fields.Integer(required=True, metadata={
        "description": "(missing + providerFailed) / invoicesInScope, basis points"})
    alerts = fields.List(fields.Nested(AlertOut), required=True)
    polling = fields.Nested(PollingStateOut, required=True)


TransmissionPage = page_of(TransmissionOut)
TransmissionPageEnvelope = enveloped(TransmissionPage)
TransmissionOutEnvelope = enveloped(TransmissionOut)
TransmissionDetailOutEnvelope = enveloped(TransmissionDetailOut)
ReconciliationOutEnvelope = enveloped(ReconciliationOut)


def transmission_out(t: Transmission) -> dict:
    return {
        "id": t.id, "invoiceNumber": t.invoice_number, "invoiceKind": t.invoice_kind,
        "documentKind": t.document_kind, "flowType": t.flow_type, "status": t.status,
        "providerStatus": t.provider_status, "providerFlowId": t.provider_flow_id,
        "operatorStatus": t.operator_status, "documentPdfKey": t.document_pdf_key,
        "amountInclTaxCents": t.amount_incl_tax_cents, "idempotencyKey": t.idempotency_key,
        "dispatchAttempts": t.dispatch_attempts, "lastErrorCode": t.last_error_code,
        "lastErrorMessage": t.last_error_message, "lastSyncedAt": iso(t.last_synced_at),
        "createdAt": iso(t.created_at), "updatedAt": iso(t.updated_at), "statusChangedAt": iso(t.status_changed_at),
    }


def event_out(e: TransmissionEvent) -> dict:
    return {
        "fromStatus": e.from_status, "toStatus": e.to_status, "providerStatus": e.provider_status,
        "operatorStatus": e.operator_status, "operatorAnswer": e.operator_answer, "errorCode": e.error_code,
        "errorMessage": e.error_message, "trigger": e.trigger, "actorUserId": e.actor_user_id,
        "occurredAt": iso(e.occurred_at),
    }


def transmission_detail_out(t: Transmission, events: list[TransmissionEvent]) -> dict:
    return {**transmission_out(t), "history": [event_out(e) for e in events]}
