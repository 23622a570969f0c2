"""Lifecycle statuses the platform itself sends for an invoice's flow: its 212s
(`payment_reports`) and, for self-billed invoices, the distributor's 205 or 210
(`decision_reports`). One way to post them: `POST /flows` with `flowInfo.flowType =
CustomerInvoiceLC` (XP Z12-013's lifecycle flow type), `flowSyntax = CDAR`, and as file the status
as JSON (the operator builds the CDAR message); the flow's `trackingId` is the report's idempotency
key, so a lost answer or a redelivery never sends a status twice at the operator. A report waits
until the operator acknowledged its invoice (a status names an invoice the recipient holds) and is
tried up to `MAX_ATTEMPTS` times (then `failed`, for an admin).
"""

from __future__ import annotations

import json

from peewee import Model, Select

from backend import clock
from backend.einvoicing.models import Transmission
from backend.einvoicing.operator_client import OperatorClient, OperatorError
from backend.einvoicing.status import TransmissionStatus
from backend.logs import log_event

STATUS_FLOW_TYPE = "CustomerInvoiceLC"
STATUS_SYNTAX = "CDAR"
SEND_BATCH = 100
MAX_ATTEMPTS = 5


def due(report_model: type[Model]) -> list:
    """The pending reports (a model with `status`, `invoice_number`, `created_at`) whose invoice the
    operator acknowledged, oldest first, one batch."""
    acknowledged: Select = Transmission.select(Transmission.invoice_number).where(
        Transmission.status == TransmissionStatus.ACKNOWLEDGED, Transmission.document_kind == "invoice")
    return list(report_model.select().where(report_model.status == "pending",
                                            report_model.invoice_number.in_(acknowledged))
                .order_by(report_model.created_at, report_model.id).limit(SEND_BATCH))


def send(report, document: dict, *, client: OperatorClient, scope: str, processing_rule: str = "B2B") -> bool:
    """Post one report's status and record the outcome on its row (`sent` with the flow id, or
    one more attempt, `failed` after the last); logs `<scope>.sent|failed`."""
    model = type(report)
    content = json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()
    try:
        flow = client.submit_flow(tracking_id=report.idempotency_key, name=f"{report.idempotency_key}.json",
                                  content=content, processing_rule=processing_rule, flow_syntax=STATUS_SYNTAX,
                                  content_type="application/json", flow_type=STATUS_FLOW_TYPE)
    except OperatorError as exc:
        attempts = report.attempts + 1
        model.update(attempts=attempts, status="failed" if attempts >= MAX_ATTEMPTS else "pending",
                     last_error_message=exc.message[:2000]).where(
            model.id == report.id, model.status == "pending").execute()
        log_event(f"{scope}.failed", f"{document['code']} not sent", level="warn", key=report.idempotency_key,
                  attempts=attempts, error=exc.message[:500])
        return False
    model.update(status="sent", provider_flow_id=flow.flow_id, sent_at=clock.now(), attempts=report.attempts + 1).where(
        model.id == report.id, model.status == "pending").execute()
    log_event(f"{scope}.sent", f"{document['code']} sent", key=report.idempotency_key, flowId=flow.flow_id,
              code=document["code"])
    return True
