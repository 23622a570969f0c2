"""An issued invoice's stored PDF: generated once, recorded on the invoice, read back.

`ensure_invoice_pdf` is what the post-invoice hook runs (step 1) and what the download and the
`vitrine billing invoice-pdf` command fall back on when the PDF is missing: render the Factur-X
PDF from the invoice's snapshot with the template and PDF style versions frozen on the invoice
when it was issued (migration 150), store it at `billing/invoices/<number>.pdf` in the private
context `billing-invoice-pdf`, then set `pdfStorageKey` and record the PDF's sha256 (once: the
database refuses to change it, migration 142). An issued invoice's document never changes: a
template or style published after the issue does not reach it, and a regeneration that gives
other bytes all the same (a frozen version deleted since, an invoice of an earlier release issued
before any version was frozen) is refused (409 `pdf_frozen`) and the stored PDF kept; one that
gives the same bytes rewrites them.

`verified_document` is what every download of a stored legal document reads: the bytes only when
their sha256 is the one recorded in the database, else 409 `DOCUMENT_INTEGRITY_FAILED`, logged and
written to the billing audit trail (a file replaced in the bucket, or a row pointing elsewhere,
never reaches a customer).
"""

from __future__ import annotations

import hashlib

from backend.billing.documents.invoice_snapshot import snapshot_of_invoice
from backend.billing.documents.render import render_invoice_pdf
from backend.billing.documents.snapshot import InvoiceSnapshot
from backend.billing.errors import DocumentIntegrityFailed
from backend.billing.models import AuditEntry, Invoice
from backend.config import Config
from backend.context import current_request_id
from backend.db import transaction
from backend.errors import Conflict, NotFound, PayloadTooLarge, ValidationError
from backend.logs import log_event
from storage import Storage, StoredObject

STORAGE_CONTEXT = "billing-invoice-pdf"  # spec C: the private context of the invoice PDFs
MAX_PDF_BYTES = 5 * 1024 * 1024
PDF_CONTENT_TYPE = "application/pdf"


def storage_key(invoice_number: str) -> str:
    return f"billing/invoices/{invoice_number}.pdf"


def store_invoice_pdf(storage: Storage, invoice_number: str, pdf: bytes) -> StoredObject:
    """Write the PDF at its key (a regeneration overwrites it); over 5 MB or not a PDF is refused."""
    if len(pdf) > MAX_PDF_BYTES:
        raise PayloadTooLarge("an invoice PDF is at most 5 MB", size=len(pdf), maxBytes=MAX_PDF_BYTES)
    if not pdf.startswith(b"%PDF-"):
        raise ValidationError("an invoice document must be application/pdf")
    return storage.put_bytes(STORAGE_CONTEXT, storage_key(invoice_number), pdf, PDF_CONTENT_TYPE)


def ensure_invoice_pdf(invoice: Invoice, *, storage: Storage, config: Config,
                       snapshot: InvoiceSnapshot | None = None, force: bool = False) -> str:
    """The storage key of the invoice's PDF, generated, stored and recorded unless it already is
    (`force` regenerates it anyway: refused when the bytes differ from the recorded ones)."""
    key = storage_key(invoice.number)
    stored = invoice.pdf_storage_key == key and storage.exists(STORAGE_CONTEXT, key)
    if not force and stored:
        return key
    template_version, style_version = frozen_versions(invoice)
    document = render_invoice_pdf(snapshot or snapshot_of_invoice(invoice, config), storage=storage, config=config,
                                  template_version=template_version, style_version=style_version)
    recorded = invoice.pdf_sha256 or (
        hashlib.sha256(storage.read_bytes(STORAGE_CONTEXT, key)).hexdigest() if stored else None)
    if recorded is not None and document.sha256 != recorded:
        log_event("billing.invoice.pdf_frozen", "a regenerated invoice PDF differs from the stored one: kept",
                  "warn", invoiceNumber=invoice.number, storedSha256=recorded, renderedSha256=document.sha256)
        raise Conflict(f"the PDF of issued invoice {invoice.number} never changes: rendering it again gives other "
                       "bytes (a frozen template or style version deleted since, or an invoice issued before "
                       "versions were frozen); the stored PDF is kept",
                       reason="pdf_frozen", invoiceNumber=invoice.number)
    store_invoice_pdf(storage, invoice.number, document.content)
    if invoice.pdf_storage_key != key or invoice.pdf_sha256 is None:
        with transaction():
            Invoice.update(pdf_storage_key=key, pdf_sha256=document.sha256).where(Invoice.id == invoice.id).execute()
        invoice.pdf_storage_key, invoice.pdf_sha256 = key, document.sha256
    return key


def verified_document(storage: Storage, context: str, key: str, recorded_sha256: str | None, *,
                      user_id: str | None, **identity: str) -> bytes:
    """The stored document's bytes when their sha256 is `recorded_sha256` (none recorded is a
    mismatch too); else the refusal, logged and audited with `identity` (the document's number or
    id), and nothing served."""
    content = storage.read_bytes(context, key)
    actual = hashlib.sha256(content).hexdigest()
    if recorded_sha256 is not None and actual == recorded_sha256:
        return content
    log_event("billing.document.integrity_failed", "a stored document differs from the one recorded: not served",
              "error", storageKey=key, recordedSha256=recorded_sha256, storedSha256=actual, **identity)
    with transaction():
        AuditEntry.create(action="billing.document.integrity_failed", actor_user_id=user_id,
                          reason="stored document differs from its recorded sha256",
                          details={**identity, "storageKey": key, "recordedSha256": recorded_sha256,
                                   "storedSha256": actual},
                          request_id=current_request_id())
    raise DocumentIntegrityFailed("the stored document is not the one recorded when it was issued: it is not served",
                                  **identity)


def frozen_versions(invoice: Invoice) -> tuple[int | None, int | None]:
    """(template, style) versions the database froze on the invoice at issue (migration 150), read
    from its row: an invoice object built before its insert does not hold them."""
    return (Invoice.select(Invoice.pdf_template_version, Invoice.pdf_style_version)
            .where(Invoice.id == invoice.id).tuples().get())


def invoice_pdf(invoice_number: str, *, storage: Storage, config: Config, regenerate: bool = False) -> bytes:
    """The PDF of invoice `invoice_number` (support, `vitrine billing invoice-pdf`): the stored
    file, generated first when it is missing (or when `regenerate`)."""
    invoice = Invoice.get_or_none(Invoice.number == invoice_number)
    if invoice is None:
        raise NotFound(f"invoice {invoice_number} not found")
    key = ensure_invoice_pdf(invoice, storage=storage, config=config, force=regenerate)
    return storage.read_bytes(STORAGE_CONTEXT, key)
