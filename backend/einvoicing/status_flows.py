"""Lifecycle statuses the platform itself sends for an invoice's flow: its 212s
(`payment_reports`) and, for self-billed invoices, the distributor's 205, 207 or 210
(`decision_reports`). One way to post them: `POST /flows` with `flowInfo.flowType =
CustomerInvoiceLC` (XP Z12-013's lifecycle flow type), `flowSyntax = CDAR`, and as file the status
as a CDAR message (`cdar`), checked (`cdar_validation`) before it leaves: a message the profile
refuses is never posted, its report ends `failed` with the problems, for an admin. The flow's
`trackingId` is the report's idempotency key, so a lost answer or a redelivery never sends a status
twice at the operator. A report waits until the operator acknowledged its invoice (a status names
an invoice the recipient holds) and is tried up to `MAX_ATTEMPTS` times (then `failed`).

The message's facts come from the invoice as issued (billing's table, read only): its number,
type code, issue date and parties; who issues the status and to whom is the caller's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from peewee import Model, Select

from backend import clock
from backend.db import database
from backend.einvoicing import cdar, cdar_validation
from backend.einvoicing.models import Transmission
from backend.einvoicing.operator_client import OperatorClient, OperatorError
from backend.einvoicing.status import TransmissionStatus
from backend.logs import log_event

STATUS_FLOW_TYPE = "CustomerInvoiceLC"
STATUS_SYNTAX = "CDAR"
SEND_BATCH = 100
MAX_ATTEMPTS = 5
# BT-3 of each kind of issued document.
TYPE_CODES = {"platform_sale": "380", "supplier_self_billed": "389", "platform_credit_note": "381",
              "supplier_credit_note": "261"}


@dataclass(frozen=True)
class InvoiceFacts:
    type_code: str
    issued_on: date
    seller: cdar.Party  # the invoice's issuer, role SE
    buyer: cdar.Party  # its customer, role BY


def invoice_facts(invoice_number: str) -> InvoiceFacts | None:
    """The invoice as issued, or None when no invoice has that number."""
    row = database.execute_sql(
        "SELECT kind, issued_at, issuer, customer FROM billing_invoice WHERE number = %s",
        (invoice_number,)).fetchone()
    if row is None:
        return None
    kind, issued_at, issuer, customer = row
    return InvoiceFacts(
        type_code=TYPE_CODES.get(kind, "380"), issued_on=issued_at.astimezone(cdar.PARIS).date(),
        seller=cdar.Party(siren=issuer.get("siren"), name=issuer.get("legalName") or "", role="SE"),
        buyer=cdar.Party(siren=customer.get("siren"), name=customer.get("legalName") or "", role="BY"))


def due(report_model: type[Model]) -> list:
    """The pending reports (a model with `status`, `invoice_number`, `created_at`) whose invoice the
    operator acknowledged, oldest first, one batch."""
    acknowledged: Select = Transmission.select(Transmission.invoice_number).where(
        Transmission.status == TransmissionStatus.ACKNOWLEDGED, Transmission.document_kind == "invoice")
    return list(report_model.select().where(report_model.status == "pending",
                                            report_model.invoice_number.in_(acknowledged))
                .order_by(report_model.created_at, report_model.id).limit(SEND_BATCH))


def send(report, message: cdar.StatusMessage | None, *, client: OperatorClient, scope: str,
         processing_rule: str = "B2B") -> bool:
    """Check and post one report's CDAR message, and record the outcome on its row (`sent` with
    the flow id, or one more attempt, `failed` after the last; `failed` at once for a message the
    profile refuses, or without its invoice); logs `<scope>.sent|failed`."""
    model = type(report)
    if message is None:
        return _failed(report, scope, "the invoice is unknown: no status can name it", final=True)
    content = cdar.build(message)
    try:
        cdar_validation.check(content)
    except cdar_validation.CdarInvalid as exc:
        return _failed(report, scope, f"the CDAR message is invalid: {exc}", final=True)
    try:
        flow = client.submit_flow(tracking_id=report.idempotency_key, name=f"{report.idempotency_key}.xml",
                                  content=content, processing_rule=processing_rule, flow_syntax=STATUS_SYNTAX,
                                  content_type="application/xml", flow_type=STATUS_FLOW_TYPE)
    except OperatorError as exc:
        return _failed(report, scope, exc.message, final=False)
    model.update(status="sent", provider_flow_id=flow.flow_id, sent_at=clock.now(), attempts=report.attempts + 1).where(
        model.id == report.id, model.status == "pending").execute()
    log_event(f"{scope}.sent", f"{message.code} sent", key=report.idempotency_key, flowId=flow.flow_id,
              code=message.code)
    return True


def _failed(report, scope: str, error: str, *, final: bool) -> bool:
    model = type(report)
    attempts = report.attempts + 1
    model.update(attempts=attempts, status="failed" if final or attempts >= MAX_ATTEMPTS else "pending",
                 last_error_message=error[:2000]).where(model.id == report.id, model.status == "pending").execute()
    log_event(f"{scope}.failed", "status not sent", level="warn", key=report.idempotency_key, attempts=attempts,
              error=error[:500])
    return False
