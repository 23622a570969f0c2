"""The distributor's acceptance or contest of each self-billed invoice (spec C's mandate: "tacit or
express acceptance with a 30-day contestation delay per invoice").

Each self-billed invoice gets a `pending` acceptance row when it is issued (`invoice._issue`). Its
deadline is 30 days after it was e-mailed to the distributor (the first delivery of
`documents/mailing.py`), not after issue: an invoice never e-mailed has no deadline and is never
tacitly accepted. Until the deadline the distributor's managers and billing members accept it
(`accepted`) or contest it with a reason (`contested`); once accepted, or after the deadline, a
contest is 409. The daily pass (`record_tacit_acceptances`) records `tacitly_accepted` for what is
still pending past its deadline. Each step is audited (`billing_audit_entry`) and logged
(`billing.supplier.self_billing.accepted|contested|tacitly_accepted`).

A contest blocks the payout (`payouts.py`: 409 `self_billing_contested`) until an admin resolves it
(`resolution.py`). Under the reform, each decision is also the lifecycle status of the invoice's
flow that the platform sends (`einvoicing/decision_reports.py`): 205 Approuvée for an acceptance,
207 En litige for a contest (coded `NON_CONFORME`), 210 Refusée only when an admin settles the
contest by an adjustment (`resolution.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from backend import clock
from backend.billing.contacts import billing_recipients
from backend.billing.documents.mailing import CONTESTATION_DAYS, emailed_at
from backend.billing.models import (
    AcceptanceStatus,
    AuditEntry,
    Invoice,
    InvoiceKind,
    InvoiceStatus,
    SelfBilledAcceptance,
)
from backend.context import current_request_id
from backend.db import database, transaction
from backend.einvoicing import decision_reports
from backend.einvoicing.reason_codes import DEFAULT_CONTEST
from backend.einvoicing.reason_codes import label as reason_label
from backend.einvoicing.reform_statuses import APPROVED, DISPUTED, TO_ADMINISTRATION, label
from backend.email.messages import public_link, queue_email
from backend.errors import Conflict, NotFound, ValidationError
from backend.logs import log_event

SCOPE = "billing.supplier.self_billing"
MAX_REASON_CHARS = 2000
DELAY = timedelta(days=CONTESTATION_DAYS)


@dataclass(frozen=True)
class Resolution:
    decision: str  # rejected | adjusted
    note: str
    resolved_at: datetime
    resolved_by_user_id: str | None
    corrected_invoice_number: str | None


@dataclass(frozen=True)
class Contest:
    reason: str
    contested_at: datetime
    contested_by_user_id: str | None
    resolution: Resolution | None  # None while it waits for an admin


@dataclass(frozen=True)
class AcceptanceView:
    """What `GET .../acceptance` answers: the status, the deadline (None until e-mailed)."""

    invoice_number: str
    status: str
    emailed_at: datetime | None
    deadline: datetime | None
    decided_at: datetime | None
    decided_by_user_id: str | None  # None for a tacit acceptance
    contest: Contest | None


def open_acceptance(invoice: Invoice) -> None:
    """A self-billed invoice just issued (caller's transaction) awaits its distributor."""
    SelfBilledAcceptance.create(invoice_id=invoice.id, organization_id=invoice.issuer_organization_id,
                                created_at=clock.now())


def deadline_of(invoice_id: str) -> tuple[datetime | None, datetime | None]:
    """(when the invoice was first e-mailed, its contestation deadline): both None until then."""
    sent = emailed_at(invoice_id)
    return sent, (sent + DELAY if sent else None)


def _invoice(invoice_number: str, organization_id: str | None) -> Invoice:
    """The self-billed invoice of that number, the distributor's own (404 otherwise, whoever's it is)."""
    query = Invoice.select().where(Invoice.number == invoice_number, Invoice.kind == InvoiceKind.SUPPLIER_SELF_BILLED)
    if organization_id is not None:
        query = query.where(Invoice.issuer_organization_id == organization_id)
    invoice = query.first()
    if invoice is None:
        raise NotFound("self-billed invoice not found")
    return invoice


def _row(invoice: Invoice, *, lock: bool = False) -> SelfBilledAcceptance:
    query = SelfBilledAcceptance.select().where(SelfBilledAcceptance.invoice_id == invoice.id)
    row = (query.for_update() if lock else query).first()
    if row is None:  # a self-billed invoice credited in full before acceptance rows existed
        raise NotFound("this self-billed invoice has no acceptance to give")
    return row


def view_of(invoice: Invoice, row: SelfBilledAcceptance) -> AcceptanceView:
    sent, deadline = deadline_of(invoice.id)
    contest = None
    if row.contested_at is not None:
        resolution = None
        if row.resolution is not None:
            corrected = (Invoice.select(Invoice.number).where(Invoice.id == row.corrected_invoice_id).scalar()
                         if row.corrected_invoice_id else None)
            resolution = Resolution(row.resolution, row.resolution_note, row.resolved_at, row.resolved_by_user_id,
                                    corrected)
        contest = Contest(row.contest_reason, row.contested_at, row.contested_by_user_id, resolution)
    return AcceptanceView(invoice.number, row.status, sent, deadline, row.decided_at, row.decided_by_user_id, contest)


def acceptance_of(*, invoice_number: str, organization_id: str | None) -> AcceptanceView:
    """The acceptance of the distributor's self-billed invoice (`organization_id` None: an admin)."""
    invoice = _invoice(invoice_number, organization_id)
    return view_of(invoice, _row(invoice))


def _audit(action: str, invoice: Invoice, *, user_id: str | None, reason: str, **details: object) -> None:
    AuditEntry.create(action=action, actor_user_id=user_id, reason=reason, reservation_id=invoice.reservation_id,
                      invoice_id=invoice.id, details={"invoiceNumber": invoice.number, **details},
                      request_id=current_request_id())


def _decide(invoice_number: str, organization_id: str, user_id: str | None,
            contest_reason: str | None = None) -> AcceptanceView:
    invoice = _invoice(invoice_number, organization_id)
    now = clock.now()
    with transaction():
        row = _row(invoice, lock=True)
        if Invoice.get_by_id(invoice.id).status == InvoiceStatus.CREDITED:
            raise Conflict("the self-billed invoice is credited in full: there is nothing to accept or contest",
                           reason="invoice_credited")
        if row.status != AcceptanceStatus.PENDING:
            raise Conflict(f"the self-billed invoice is already {row.status}", reason=f"already_{row.status}",
                           status=row.status)
        _, deadline = deadline_of(invoice.id)
        if contest_reason is not None and deadline is not None and now >= deadline:
            raise Conflict("the 30-day contestation delay of this invoice is over", reason="contestation_closed",
                           deadline=clock.iso(deadline))
        if contest_reason is None:
            row.status, row.decided_at, row.decided_by_user_id = AcceptanceStatus.ACCEPTED, now, user_id
        else:
            row.status, row.contest_reason = AcceptanceStatus.CONTESTED, contest_reason
            row.contested_at, row.contested_by_user_id = now, user_id
        row.save(only=[SelfBilledAcceptance.status, SelfBilledAcceptance.decided_at,
                       SelfBilledAcceptance.decided_by_user_id, SelfBilledAcceptance.contest_reason,
                       SelfBilledAcceptance.contested_at, SelfBilledAcceptance.contested_by_user_id])
        status = str(row.status)
        _audit(f"{SCOPE}.{status}", invoice, user_id=user_id, reason=contest_reason or "accepted by the distributor")
        if contest_reason is None:
            report = decision_reports.queue(invoice.number, code=APPROVED, at=now)
        else:
            report = decision_reports.queue(invoice.number, code=DISPUTED, at=now, reason_code=DEFAULT_CONTEST,
                                            reason=contest_reason)
        if report is not None:
            tell_distributor(invoice.issuer_organization_id, invoice.number, report)
    log_event(f"{SCOPE}.{status}", f"self-billed invoice {status} by the distributor", "info",
              invoiceNumber=invoice.number, organizationId=organization_id, userId=user_id,
              reservationId=invoice.reservation_id)
    return view_of(invoice, row)


def tell_distributor(organization_id: str, invoice_number: str, report) -> None:
    """E-mail the distributor's billing contacts that a status goes out in its name (in the
    caller's transaction): which one, with its coded reason, and to whom."""
    status = f"{report.code} {label(report.code)}"
    reason = f" (motif {report.reason_code} : {reason_label(report.reason_code)})" if report.reason_code else ""
    recipients = " et le transmet à l'administration fiscale" if report.code in TO_ADMINISTRATION else ""
    link = public_link("/distributor/billing")
    for to in billing_recipients(organization_id):
        queue_email("self_billing_status_sent", to=to, number=invoice_number, status=status, reason=reason,
                    recipients=recipients, link=link)


def accept(*, invoice_number: str, organization_id: str, user_id: str | None) -> AcceptanceView:
    """The distributor accepts its self-billed invoice (409 unless `pending`)."""
    return _decide(invoice_number, organization_id, user_id)


def contest(*, invoice_number: str, organization_id: str, user_id: str | None, reason: str) -> AcceptanceView:
    """The distributor contests its self-billed invoice: a reason of 1 to 2,000 characters (400),
    while `pending` and before the deadline (409)."""
    reason = (reason or "").strip()
    if not reason or len(reason) > MAX_REASON_CHARS:
        raise ValidationError("a contest needs a reason of 1 to 2000 characters",
                              fields={"reason": [f"1 to {MAX_REASON_CHARS} characters"]})
    return _decide(invoice_number, organization_id, user_id, contest_reason=reason)


_TACIT = f"""
UPDATE billing_self_billed_acceptance a SET status = 'tacitly_accepted', decided_at = %(now)s
FROM (SELECT m.invoice_id, min(e.sent_at) AS sent
      FROM billing_document_mailing m JOIN email_message e ON e.id = ANY(m.email_message_ids)
      GROUP BY m.invoice_id) s, billing_invoice i
WHERE s.invoice_id = a.invoice_id AND i.id = a.invoice_id AND a.status = 'pending' AND i.status <> 'credited'
  AND s.sent + interval '{CONTESTATION_DAYS} days' <= %(now)s
RETURNING a.invoice_id
"""  # noqa: S608 (a constant)


def record_tacit_acceptances() -> int:
    """The daily pass: the self-billed invoices still pending 30 days after they were e-mailed are
    tacitly accepted (audited, logged); returns how many. Safe to run twice or concurrently (the
    UPDATE takes each row once)."""
    now = clock.now()
    with transaction():
        ids = [row[0] for row in database.execute_sql(_TACIT, {"now": now}).fetchall()]
        invoices = list(Invoice.select().where(Invoice.id.in_(ids))) if ids else []
        for invoice in invoices:
            _audit(f"{SCOPE}.tacitly_accepted", invoice, user_id=None, reason="no contest within 30 days of the e-mail")
            report = decision_reports.queue(invoice.number, code=APPROVED, at=now)
            if report is not None:
                tell_distributor(invoice.issuer_organization_id, invoice.number, report)
    for invoice in invoices:
        log_event(f"{SCOPE}.tacitly_accepted", "self-billed invoice tacitly accepted", "info",
                  invoiceNumber=invoice.number, organizationId=invoice.issuer_organization_id,
                  reservationId=invoice.reservation_id)
    return len(invoices)
