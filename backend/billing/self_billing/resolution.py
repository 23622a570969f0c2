"""An admin resolves a distributor's contest of a self-billed invoice.

- `reject`: the invoice stands; the contest keeps its reason and gets the admin's note, the
  distributor is told by e-mail (where to answer: `PLATFORM_BILLING_CONTACT_EMAIL`, also its
  Reply-To, else its space), and the payout may go (the contest no longer blocks it).
- `adjust`: in one transaction under the reservation's financial record lock, a
  `supplier_credit_note` credits what is left of the contested invoice (`store_share.credit_self_billed`:
  the journal, the distributor's debt when it was paid out already, the settlement voided), then a
  corrected self-billed invoice is issued for the amount the admin sets, the next number of the
  distributor's series, never above the store share of what the customer paid (409
  `amount_above_store_share`, `details.maximumCents`). Both documents are e-mailed by the
  post-invoice hook like any other; the corrected invoice starts its own 30 days. The contested
  invoice's 210 Refusée (coded `NON_CONFORME`, the admin's note as its text) is recorded in the
  same transaction (`einvoicing/decision_reports.py`): the 207 sent at the contest was a dispute
  that could still settle; this one is final. A rejected contest sends no 210.

Both are audited (`billing.supplier.self_billing.contest_rejected|adjusted`) and logged; the
adjustment also logs `billing.supplier.self_billing.adjusted` with the corrected invoice.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from backend import clock
from backend.billing import records, store_share
from backend.billing.contacts import billing_recipients
from backend.billing.models import AcceptanceStatus, AuditEntry, ContestResolution, Invoice, SelfBilledAcceptance
from backend.billing.self_billing.acceptance import (
    MAX_REASON_CHARS,
    AcceptanceView,
    tell_distributor,
    view_of,
)
from backend.billing.self_billing.invoice import issue_corrected
from backend.config import Config
from backend.context import current_request_id
from backend.db import transaction
from backend.einvoicing import decision_reports
from backend.einvoicing.reason_codes import DEFAULT_CONTEST
from backend.einvoicing.reform_statuses import REFUSED
from backend.email.messages import public_link, queue_email
from backend.errors import Conflict, NotFound, ValidationError
from backend.listing import ListParams, Page, paginate
from backend.logs import log_event

SCOPE = "billing.supplier.self_billing"


@dataclass(frozen=True)
class ContestedItem:
    """An open contest in the admin's list."""

    invoice_number: str
    organization_id: str
    reservation_id: str | None
    amount_excl_tax_cents: int
    contest_reason: str
    contested_at: datetime


@dataclass(frozen=True)
class Resolved:
    acceptance: AcceptanceView
    credit_note_number: str | None
    corrected_invoice_number: str | None


def contested(params: ListParams) -> Page:
    """Open contests (not resolved yet), oldest first by default."""
    query = (SelfBilledAcceptance.select(SelfBilledAcceptance, Invoice)
             .join(Invoice, on=(Invoice.id == SelfBilledAcceptance.invoice_id), attr="invoice")
             .where(SelfBilledAcceptance.status == AcceptanceStatus.CONTESTED,
                    SelfBilledAcceptance.resolution.is_null()))
    page = paginate(query, params, sorts={"contestedAt": SelfBilledAcceptance.contested_at,
                                          "invoiceNumber": Invoice.number},
                    default_sort="contestedAt", tiebreaker=SelfBilledAcceptance.invoice_id,
                    search_columns=(Invoice.number, SelfBilledAcceptance.organization_id))
    return Page([ContestedItem(row.invoice.number, row.organization_id, row.invoice.reservation_id,
                               row.invoice.amount_excl_tax_cents, row.contest_reason, row.contested_at)
                 for row in page.items], page.total, page.page, page.page_size)


def _locked_open_contest(invoice_number: str):
    """The invoice, its reservation's financial record and its acceptance, locked in the payout's
    order (the record, then the acceptance): a payout racing a resolution waits for it."""
    invoice = Invoice.get_or_none(Invoice.number == invoice_number, Invoice.kind == "supplier_self_billed")
    if invoice is None:
        raise NotFound("self-billed invoice not found")
    record = records.locked_record(invoice.reservation_id)
    row = SelfBilledAcceptance.select().where(SelfBilledAcceptance.invoice_id == invoice.id).for_update().first()
    if row is None or row.status != AcceptanceStatus.CONTESTED or row.resolution is not None:
        raise Conflict("this self-billed invoice has no open contest", reason="no_open_contest",
                       status=row.status if row else None)
    return invoice, record, row


def resolve(*, invoice_number: str, decision: str, note: str, amount_cents: int | None, user_id: str | None,
            config: Config) -> Resolved:
    """Reject the contest or adjust the invoice (see the module docstring)."""
    note = (note or "").strip()
    if not note or len(note) > MAX_REASON_CHARS:
        raise ValidationError("a resolution needs a note of 1 to 2000 characters",
                              fields={"note": [f"1 to {MAX_REASON_CHARS} characters"]})
    if decision == "adjust" and amount_cents is None:
        raise ValidationError("an adjustment needs amountCents", fields={"amountCents": ["required to adjust"]})
    now = clock.now()
    note_number = corrected_number = None
    with transaction():
        invoice, record, row = _locked_open_contest(invoice_number)
        if decision == "adjust":
            left, _ = store_share.due_of(invoice)
            credit = store_share.credit_self_billed(invoice, left, record, reason=note, user_id=user_id, config=config,
                                                   label="Annulation après contestation")
            corrected = issue_corrected(invoice.reservation_id, amount_cents, config=config, user_id=user_id)
            note_number, corrected_number = credit.number, corrected.number
            refusal = decision_reports.queue(invoice.number, code=REFUSED, at=now, reason_code=DEFAULT_CONTEST,
                                             reason=note)
            if refusal is not None:
                tell_distributor(row.organization_id, invoice.number, refusal)
            row.resolution, row.corrected_invoice_id = ContestResolution.ADJUSTED, corrected.id
        else:
            row.resolution = ContestResolution.REJECTED
            link = public_link("/distributor/billing")
            contact = (f"répondez à ce message ou écrivez à {config.platform_billing_contact_email}"
                       if config.platform_billing_contact_email else "écrivez-nous depuis votre espace")
            for to in billing_recipients(row.organization_id):
                queue_email("self_billing_contest_rejected", to=to, number=invoice.number, note=note, link=link,
                            contact=contact)
        row.resolution_note, row.resolved_at, row.resolved_by_user_id = note, now, user_id
        row.save(only=[SelfBilledAcceptance.resolution, SelfBilledAcceptance.resolution_note,
                       SelfBilledAcceptance.resolved_at, SelfBilledAcceptance.resolved_by_user_id,
                       SelfBilledAcceptance.corrected_invoice_id])
        action = f"{SCOPE}.{'adjusted' if decision == 'adjust' else 'contest_rejected'}"
        AuditEntry.create(action=action, actor_user_id=user_id, reason=note, reservation_id=invoice.reservation_id,
                          invoice_id=invoice.id, details={"invoiceNumber": invoice.number, "decision": decision,
                                                          "amountCents": amount_cents, "creditNoteNumber": note_number,
                                                          "correctedInvoiceNumber": corrected_number},
                          request_id=current_request_id())
    log_event(action, f"contest of a self-billed invoice resolved: {decision}", "info", invoiceNumber=invoice.number,
              organizationId=row.organization_id, reservationId=invoice.reservation_id, decision=decision,
              creditNoteNumber=note_number, correctedInvoiceNumber=corrected_number, amountCents=amount_cents,
              userId=user_id)
    return Resolved(view_of(invoice, row), note_number, corrected_number)
