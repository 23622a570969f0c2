"""An issued invoice's stored PDF: generated once, recorded on the invoice, read back.

`ensure_invoice_pdf` is what the post-invoice hook runs (step 1) and what the download and the
`vitrine billing invoice-pdf` command fall back on when the PDF is missing: render the Factur-X
PDF from the invoice's snapshot, store it at `billing/invoices/<number>.pdf` in the private
context `billing-invoice-pdf`, then set `pdfStorageKey`. Rendering is deterministic, so a
regeneration writes the same bytes over the same key.
"""

from __future__ import annotations

from backend.billing.invoice_document import STORAGE_CONTEXT, render_invoice_pdf, storage_key, store_invoice_pdf
from backend.billing.invoice_snapshot import snapshot_of_invoice
from backend.billing.models import Invoice
from backend.billing.snapshot import InvoiceSnapshot
from backend.config import Config
from backend.db import transaction
from backend.errors import NotFound
from storage import Storage


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
