"""The distributor's decision on a self-billed invoice, as the reform's lifecycle status: the
platform sends it (docs/einvoicing.md "Self-billed invoices: the statuses sent for the
distributor").

Why the platform sends and does not receive: under self-billing the platform, the buyer, issues
the invoice in the distributor's name and deposits it; the party that approves, disputes or
refuses an invoice is its recipient, here the seller. The distributor decides on the platform
(accept, contest, or silence for 30 days), under the self-billing mandate it signed with the
platform, so the platform reports that decision for the invoice's flow:
- 205 Approuvée for an express or tacit acceptance;
- 207 En litige for a contest, with its coded reason: a dispute that may still settle;
- 210 Refusée when an admin settles the contest by an adjustment (the invoice is credited and a
  corrected one issued): the refusal is final and reaches the administration; a contest the
  admin rejects sends no 210 (the invoice stands).
Each is recorded once (`<number>:<code>`), shown at once in the transmission's `lifecycle`, and
posted by the polling pass like the 212s (`status_flows`: a CDAR message issued in the
distributor's name, role seller, to the platform, and for a 210 to the public portal too) once the
operator has acknowledged the invoice. A decision taken before the invoice's transmission exists
(the distributor answers seconds after the issue, through the API) is recorded all the same and
joins the transmission's `lifecycle` when its draft is created (`replay_onto`); an invoice never
transmitted (self-billing kept out of e-invoicing) keeps its decisions recorded and sends none.
"""

from __future__ import annotations

from datetime import datetime

from backend import clock
from backend.einvoicing import cdar, reason_codes, status_flows
from backend.einvoicing.models import DecisionReport, LifecycleEvent, Transmission
from backend.einvoicing.operator_client import OperatorClient
from backend.einvoicing.reform_statuses import APPROVED, DISPUTED, REFUSED, TO_ADMINISTRATION

CODES = (APPROVED, DISPUTED, REFUSED)


def queue(invoice_number: str, *, code: int, at: datetime, reason_code: str | None = None,
          reason: str | None = None) -> DecisionReport | None:
    """Record the decision's status for the invoice's flow, in the caller's transaction, shown in
    its transmission's `lifecycle` when there is one already (else when its draft is created); a
    second call for the same code adds nothing. A 207 or a 210 needs a reason code the reform's
    list admits for that status (ValueError otherwise)."""
    if code not in CODES:
        raise ValueError(f"a distributor's decision is one of {CODES}, not {code}")
    if code != APPROVED and not reason_codes.admitted(reason_code, code):
        raise ValueError(f"a {code} carries a reason code the reform admits for it, not {reason_code!r}")
    key = f"{invoice_number}:{code}"
    inserted = (DecisionReport.insert(id=DecisionReport.id.default(), idempotency_key=key,
                                      invoice_number=invoice_number, code=code, reason_code=reason_code,
                                      reason=reason, decided_at=at, created_at=clock.now())
                .on_conflict(conflict_target=[DecisionReport.idempotency_key], action="IGNORE").execute())
    if not inserted:
        return None
    transmission = Transmission.get_or_none(Transmission.invoice_number == invoice_number,
                                            Transmission.document_kind == "invoice")
    if transmission is not None:
        (LifecycleEvent.insert(transmission=transmission.id, code=code, at=at, reason=_shown(reason_code, reason),
                               received_at=clock.now())
         .on_conflict_ignore().execute())
    return DecisionReport.get(DecisionReport.idempotency_key == key)


def _shown(reason_code: str | None, reason: str | None) -> str | None:
    """The reason as the `lifecycle` shows it: the code, then the words when there are some."""
    return f"{reason_code} {reason}" if reason_code and reason else reason_code


def replay_onto(transmission: Transmission) -> int:
    """The decisions recorded for `transmission`'s invoice before it existed, added to its
    `lifecycle` (in the caller's transaction); returns how many."""
    rows = [{"transmission": transmission.id, "code": report.code, "at": report.decided_at,
             "reason": _shown(report.reason_code, report.reason), "received_at": clock.now()}
            for report in DecisionReport.select().where(DecisionReport.invoice_number == transmission.invoice_number)
            .order_by(DecisionReport.decided_at)]
    if rows:
        LifecycleEvent.insert_many(rows).on_conflict_ignore().execute()
    return len(rows)


def send_due(*, client: OperatorClient) -> dict[str, int]:
    """Post the pending statuses whose invoice the operator acknowledged; returns `{sent, failed}`."""
    counts = {"sent": 0, "failed": 0}
    for report in status_flows.due(DecisionReport):
        sent = status_flows.send(report, message_for(report), client=client, scope="einvoicing.decision_report")
        counts["sent" if sent else "failed"] += 1
    return counts


def message_for(report: DecisionReport) -> cdar.StatusMessage | None:
    """The decision as a CDAR message, issued in the distributor's name (None when its invoice is
    unknown)."""
    facts = status_flows.invoice_facts(report.invoice_number)
    if facts is None:
        return None
    recipients = (facts.buyer, cdar.PUBLIC_PORTAL) if report.code in TO_ADMINISTRATION else (facts.buyer,)
    return cdar.StatusMessage(
        message_id=report.idempotency_key, invoice_number=report.invoice_number, invoice_type_code=facts.type_code,
        invoice_issued_on=facts.issued_on, invoice_issuer_siren=facts.seller.siren, code=report.code,
        at=report.decided_at, created_at=report.created_at, issuer=facts.seller, recipients=recipients,
        reason_code=report.reason_code, reason=report.reason)
