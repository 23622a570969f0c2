"""Documents e-mailed to the people they concern, once their Factur-X PDF is stored.

The post-invoice hook, or the operator's acceptance of the deposit (below), queues
`mail_invoice_document` once the PDF is stored; this module's
`mail_document` (the actor's service) writes, in one transaction, the document's claim
(`billing_document_mailing`, keyed by the invoice: a redelivered job or a second hook finds it and
sends nothing more) and one outbox e-mail per recipient, each carrying the stored PDF by reference
(`backend.email.messages.Attachment`): the Factur-X file itself, so its XML travels with it. The
e-mail outbox delivers them (SMTP, or `.eml` files under `vitrine dev`), retrying failures.

When: a document the e-invoicing operator receives is e-mailed as what it is, a copy of the
electronic invoice, once the operator accepted its deposit (`einvoice.acknowledged`); the e-mail
says so and gives the deposit's day. While its transmission waits, the job sends nothing (the
acceptance queues it again), and a rejected deposit is never e-mailed: a rejected invoice is deemed
never issued (docs/einvoicing.md). A document that is no electronic invoice (no transmission, or
only e-reporting data for a buyer abroad) is the invoice itself, e-mailed once its PDF is stored.
The transmission is read from the e-invoicing area's table (read only: billing documents never
import that area).

Who receives what: sale invoices and their credit notes go to the industrial customer; self-billed
invoices and supplier credit notes go to the distributor in whose name they were issued, with the
contestation deadline and how to contest. The recipient is the organization's billing e-mail
(billing profile) or else each of its managers. Legacy kinds are not e-mailed. The e-mails' only
link opens the signed-in space: none carries a session or a token.
"""

from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo

from backend import clock
from backend.billing.contacts import billing_recipients
from backend.billing.documents.stored_pdf import PDF_CONTENT_TYPE, STORAGE_CONTEXT
from backend.billing.models import CREDIT_NOTE_KINDS, DocumentMailing, Invoice, InvoiceKind
from backend.billing.vat import amount_incl_tax_cents
from backend.db import database, transaction
from backend.documents.formatting import format_date, format_euros
from backend.email.messages import Attachment, public_link, queue_email
from backend.logs import log_event
from storage import Storage

SCOPE = "billing.invoice.emailed"
PARIS = ZoneInfo("Europe/Paris")
# The distributor's delay to contest a self-billed invoice (spec C's mandate: "30-day contestation
# delay per invoice"), from the day it was e-mailed; `self_billing/acceptance.py` applies it.
CONTESTATION_DAYS = 30
SELF_BILLED_KINDS = frozenset({InvoiceKind.SUPPLIER_SELF_BILLED, InvoiceKind.SUPPLIER_CREDIT_NOTE})
MAILED_KINDS = SELF_BILLED_KINDS | {InvoiceKind.PLATFORM_SALE, InvoiceKind.PLATFORM_CREDIT_NOTE}


def recipient_organization(invoice: Invoice) -> str | None:
    """Who the document concerns: the distributor of a self-billed kind, else the customer."""
    return invoice.issuer_organization_id if invoice.kind in SELF_BILLED_KINDS else invoice.customer_organization_id


def _paris_day(moment) -> str:
    return format_date(moment.astimezone(PARIS).date())


def _context(invoice: Invoice) -> dict[str, str]:
    credit_note = invoice.kind in CREDIT_NOTE_KINDS
    if credit_note:
        credited = Invoice.get_by_id(invoice.credited_invoice_id)
        payment = f"Cet avoir se rapporte à la facture {credited.number}."
    elif invoice.kind == InvoiceKind.SUPPLIER_SELF_BILLED:  # paid out once accepted (docs/billing.md)
        payment = ("Paiement par virement une fois la facture acceptée, expressément ou tacitement, au plus tard "
                   f"le {_paris_day(invoice.due_at)} (son échéance, selon le mandat d'autofacturation).")
    else:
        payment = f"Date d'échéance : {_paris_day(invoice.due_at)}."
    amount = amount_incl_tax_cents(invoice.amount_excl_tax_cents, invoice.vat_rate_bps,
                                   credited_before_cents=invoice.credited_before_cents)
    context = {
        "document": "Avoir" if credit_note else "Facture",
        "document_phrase": "l'avoir" if credit_note else "la facture", "issued": "émis" if credit_note else "émise",
        "number": invoice.number, "issued_on": _paris_day(invoice.issued_at), "issuer": invoice.issuer["legalName"],
        "amount": format_euros(amount), "payment": payment,
    }
    if invoice.kind == InvoiceKind.SUPPLIER_SELF_BILLED:
        deadline = _paris_day(clock.now() + timedelta(days=CONTESTATION_DAYS))
        context["acceptance"] = (
            f"Vous disposez de {CONTESTATION_DAYS} jours à compter de l'envoi de ce message, soit jusqu'au "
            f"{deadline}, pour accepter ou contester cette facture depuis votre espace (Facturation, "
            f"autofactures) ou par l'API : POST /api/billing/self-billed/{invoice.number}/accept, ou "
            f"POST /api/billing/self-billed/{invoice.number}/contest avec votre motif. Sans contestation dans ce "
            "délai, elle est réputée acceptée et son paiement intervient.")
    elif invoice.kind == InvoiceKind.SUPPLIER_CREDIT_NOTE:
        context["acceptance"] = "Cet avoir ne demande aucune action de votre part."
    return context


def mail_document(invoice_id: str, *, storage: Storage) -> DocumentMailing | None:
    """E-mail the document with its stored PDF attached, once; None when it is not to be mailed
    (legacy kind, no PDF yet, no recipient) or was mailed already."""
    invoice = Invoice.get_or_none(Invoice.id == invoice_id)
    if invoice is None or invoice.kind not in MAILED_KINDS:
        return None
    organization_id = recipient_organization(invoice)
    if invoice.pdf_storage_key is None or organization_id is None:
        log_event(f"{SCOPE}_skipped", "document not e-mailed: no stored PDF or no recipient organization", "warn",
                  invoiceNumber=invoice.number, kind=invoice.kind)
        return None
    deposit = deposit_accepted_at(invoice.number)
    if deposit is AWAITING_DEPOSIT:
        log_event(f"{SCOPE}_deferred", "document not e-mailed yet: its deposit is not accepted by the operator",
                  "info", invoiceNumber=invoice.number, kind=invoice.kind)
        return None
    recipients = billing_recipients(organization_id)
    if not recipients:
        log_event(f"{SCOPE}_skipped", "document not e-mailed: the organization has no billing e-mail nor manager",
                  "warn", invoiceNumber=invoice.number, organizationId=organization_id)
        return None
    pdf = Attachment(STORAGE_CONTEXT, invoice.pdf_storage_key, f"{invoice.number}.pdf", PDF_CONTENT_TYPE,
                     storage.size(STORAGE_CONTEXT, invoice.pdf_storage_key))
    template = "self_billed_document" if invoice.kind in SELF_BILLED_KINDS else "billing_document"
    link = public_link("/distributor/billing" if invoice.kind in SELF_BILLED_KINDS else "/industrial/billing")
    context = {**_context(invoice), "copy": _copy_notice(invoice, deposit)}
    with transaction():
        claimed = (DocumentMailing.insert(invoice_id=invoice.id, email_message_ids=[], recipients=recipients,
                                          created_at=clock.now())
                   .on_conflict_ignore().execute())
        if not claimed:  # mailed already (a redelivery, a second hook): nothing more is sent
            return None
        ids = [queue_email(template, to=to, attachments=(pdf,), link=link, **context).id for to in recipients]
        DocumentMailing.update(email_message_ids=ids).where(DocumentMailing.invoice_id == invoice.id).execute()
    log_event(SCOPE, "document e-mailed with its Factur-X PDF", "info", invoiceNumber=invoice.number,
              kind=invoice.kind, organizationId=organization_id, recipients=len(recipients))
    return DocumentMailing.get_by_id(invoice.id)


# The document's transmission exists and the operator has not accepted its deposit (yet, or ever).
AWAITING_DEPOSIT = object()


def deposit_accepted_at(invoice_number: str):
    """When the operator accepted the document's deposit as an electronic invoice (its `B2B`
    transmission `acknowledged`), None when the document is not one (no transmission, or an
    e-reporting one), `AWAITING_DEPOSIT` while its deposit is not accepted."""
    rows = database.execute_sql(  # the e-invoicing area's table, read only
        "SELECT status, status_changed_at FROM einvoice_transmission WHERE invoice_number = %s"
        " AND processing_rule = 'B2B'",
        (invoice_number,)).fetchall()
    accepted = [changed for status, changed in rows if status == "acknowledged"]
    if accepted:
        return min(accepted)
    return AWAITING_DEPOSIT if rows else None


def _copy_notice(invoice: Invoice, deposit) -> str:
    """What a transmitted document's e-mail says it is: a copy; the original is the electronic
    invoice the platform's operator received on the deposit's day (empty when not transmitted)."""
    if deposit is None:
        return ""
    credit_note = invoice.kind in CREDIT_NOTE_KINDS
    what = "de l'avoir électronique" if credit_note else "de la facture électronique"
    deposited, it = ("déposé", "le") if credit_note else ("déposée", "la")
    return (f"Ce PDF est une copie {what} {invoice.number}, {deposited} le {_paris_day(deposit)} auprès de notre "
            f"plateforme de dématérialisation partenaire, qui {it} transmet à la plateforme de réception du "
            "destinataire : l'original qui fait foi est ce document électronique.\n\n")


def emailed_at(invoice_id: str):
    """When the document's first e-mail was delivered (None while none was)."""
    cursor = database.execute_sql(
        "SELECT min(e.sent_at) FROM billing_document_mailing m JOIN email_message e ON e.id = ANY(m.email_message_ids)"
        " WHERE m.invoice_id = %s", (invoice_id,))
    return cursor.fetchone()[0]
