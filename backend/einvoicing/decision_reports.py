"""The distributor's decision on a self-billed invoice, as the reform's lifecycle status: the
platform sends it (docs/einvoicing.md "Self-billed invoices: 205 and 210").

Why the platform sends and does not receive: under self-billing the platform, the buyer, issues
the invoice in the distributor's name and deposits it; the party that approves or refuses an
invoice is its recipient, here the seller. The distributor decides on the platform (accept,
contest, or silence for 30 days), under the self-billing mandate it signed with the platform,
so the platform reports that decision for the invoice's flow: 205 Approuvée for an express or
tacit acceptance, 210 Refusée for a contest (its reason). Each is recorded once (`<number>:<code>`),
shown at once in the transmission's `lifecycle`, and posted by the polling pass like the 212s
(`status_flows`: `CustomerInvoiceLC`, `CDAR`, the status as JSON `{invoiceNumber, code, label, at,
reason}`) once the operator has acknowledged the invoice. An invoice with no transmission
(self-billing kept out of e-invoicing) gets no status.
"""

from __future__ import annotations

from datetime import datetime

from backend import clock
from backend.einvoicing import status_flows
from backend.einvoicing.models import DecisionReport, LifecycleEvent, Transmission
from backend.einvoicing.operator_client import OperatorClient
from backend.einvoicing.reform_statuses import LABELS, REFUSED

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
    counts = {"sent": 0, "failed": 0}
    for report in status_flows.due(DecisionReport):
        document = {"invoiceNumber": report.invoice_number, "code": report.code, "label": LABELS[report.code],
                    "at": clock.iso(report.decided_at), "reason": report.reason}
        sent = status_flows.send(report, document, client=client, scope="einvoicing.decision_report")
        counts["sent" if sent else "failed"] += 1
    return counts
