"""An issued invoice's stored PDF: generated once, recorded on the invoice, read back.

`ensure_invoice_pdf` is what the post-invoice hook runs (step 1) and what the download and the
`vitrine billing invoice-pdf` command fall back on when the PDF is missing: render the Factur-X
PDF from the invoice's snapshot, store it at `billing/invoices/<number>.pdf` in the private
context `billing-invoice-pdf`, then set `pdfStorageKey`. Rendering is deterministic, so a
regeneration writes the same bytes over the same key.
"""

from __future__ import annotations

from backend.billing.documents.invoice_snapshot import snapshot_of_invoice
from backend.billing.documents.render import render_invoice_pdf
from backend.billing.documents.snapshot import InvoiceSnapshot
from backend.billing.models import Invoice
from backend.config import Config
from backend.db import transaction
from backend.errors import NotFound, PayloadTooLarge, ValidationError
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
    (`force` regenerates it anyway: the same bytes over the same key)."""
    key = storage_key(invoice.number)
    if not force and invoice.pdf_storage_key == key and storage.exists(STORAGE_CONTEXT, key):
        return key
    document = render_invoice_pdf(snapshot or snapshot_of_invoice(invoice, config), storage=storage, config=config)
    store_invoice_pdf(storage, invoice.number, document.content)
    if invoice.pdf_storage_key != key:
        with transaction():
            Invoice.update(pdf_storage_key=key).where(Invoice.id == invoice.id).execute()
        invoice.pdf_storage_key = key
    return key


def invoice_pdf(invoice_number: str, *, storage: Storage, config: Config, regenerate: bool = False) -> bytes:
    """The PDF of invoice `invoice_number` (support, `vitrine billing invoice-pdf`): the stored
    file, generated first when it is missing (or when `regenerate`)."""
    invoice = Invoice.get_or_none(Invoice.number == invoice_number)
    if invoice is None:
        raise NotFound(f"invoice {invoice_number} not found")
    key = ensure_invoice_pdf(invoice, storage=storage, config=config, force=regenerate)
    return storage.read_bytes(STORAGE_CONTEXT, key)
