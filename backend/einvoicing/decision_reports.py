"""The distributor's decision on a self-billed invoice, as the reform's lifecycle status: the
platform sends it (issue 32; docs/einvoicing.md "Self-billed invoices: 205 and 210").

Why the platform sends and does not receive: under self-billing the platform, the buyer, issues
the invoice in the distributor's name and deposits it; the party that approves or refuses an
invoice is its recipient, here the seller. The distributor decides on the platform (accept,
contest, or silence for 30 days), under the self-billing mandate it signed with the platform,
so the platform reports that decision for the invoice's flow: 205 Approuvée for an express or
tacit acceptance, 210 Refusée for a contest (its reason). Each is recorded once (`<number>:<code>`),
shown at once in the transmission's `lifecycle`, and posted by the polling pass like the 212s
(`payment_reports`: `CustomerInvoiceLC`, `CDAR`, the status as JSON) once the operator has
acknowledged the invoice. An invoice with no transmission (self-billing kept out of e-invoicing)
gets no status.
"""

from __future__ import annotations

import json
from datetime import datetime

from backend import clock
from backend.einvoicing.models import DecisionReport, LifecycleEvent, Transmission
from backend.einvoicing.operator_client import OperatorClient, OperatorError
from backend.einvoicing.payment_reports import MAX_ATTEMPTS, SEND_BATCH, STATUS_FLOW_TYPE, STATUS_SYNTAX
from backend.einvoicing.reform_statuses import LABELS, REFUSED
from backend.einvoicing.status import TransmissionStatus
from backend.logs import log_event

APPROVED = 205


def queue(invoice_number: str, *, accepted: bool, reason: str | None, at: datetime) -> DecisionReport | None:
    """Record the decision's status for the invoice's flow, in the caller's transaction (nothing
    without a transmission); a second call for the same code adds nothing."""
    transmission = Transmission.get_or_none(Transmission.invoice_number == invoice_number,
                                            Transmission.document_kind == "invoice")
    if transmission is None:
        return None
    code = APPROVED if accepted else REFUSED
    key = f"{invoice_number}:{code}"
    inserted = (DecisionReport.insert(id=DecisionReport.id.default(), idempotency_key=key,
                                      invoice_number=invoice_number, code=code, reason=reason, decided_at=at,
                                      created_at=clock.now())
                .on_conflict(conflict_target=[DecisionReport.idempotency_key], action="IGNORE").execute())
    if not inserted:
        return None
    (LifecycleEvent.insert(transmission=transmission.id, code=code, at=at, reason=reason, received_at=clock.now())
     .on_conflict_ignore().execute())
    return DecisionReport.get(DecisionReport.idempotency_key == key)


def send_due(*, client: OperatorClient) -> dict[str, int]:
    """Post the pending statuses whose invoice the operator acknowledged; returns `{sent, failed}`."""
    acknowledged = Transmission.select(Transmission.invoice_number).where(
        Transmission.status == TransmissionStatus.ACKNOWLEDGED, Transmission.document_kind == "invoice")
    due = list(DecisionReport.select().where(DecisionReport.status == "pending",
                                             DecisionReport.invoice_number.in_(acknowledged))
               .order_by(DecisionReport.created_at, DecisionReport.id).limit(SEND_BATCH))
    counts = {"sent": 0, "failed": 0}
    for report in due:
        counts["sent" if _send(report, client) else "failed"] += 1
    return counts


def _send(report: DecisionReport, client: OperatorClient) -> bool:
    document = {"invoiceNumber": report.invoice_number, "code": report.code, "label": LABELS[report.code],
                "at": clock.iso(report.decided_at), "reason": report.reason}
    content = json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()
    try:
        flow = client.submit_flow(tracking_id=report.idempotency_key, name=f"{report.idempotency_key}.json",
                                  content=content, flow_syntax=STATUS_SYNTAX, content_type="application/json",
                                  flow_type=STATUS_FLOW_TYPE)
    except OperatorError as exc:
        attempts = report.attempts + 1
        DecisionReport.update(attempts=attempts, status="failed" if attempts >= MAX_ATTEMPTS else "pending",
                              last_error_message=exc.message[:2000]).where(
            DecisionReport.id == report.id, DecisionReport.status == "pending").execute()
        log_event("einvoicing.decision_report.failed", "lifecycle status not sent", level="warn",
                  key=report.idempotency_key, attempts=attempts, error=exc.message[:500])
        return False
    DecisionReport.update(status="sent", provider_flow_id=flow.flow_id, sent_at=clock.now(),
                          attempts=report.attempts + 1).where(
        DecisionReport.id == report.id, DecisionReport.status == "pending").execute()
    log_event("einvoicing.decision_report.sent", "lifecycle status sent", key=report.idempotency_key,
              code=report.code, flowId=flow.flow_id)
    return True
