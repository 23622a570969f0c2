"""Invoices: list, PDF download, refund and credit note (spec C "Invoices", API.md decisions).

`invoiceId` in the routes is the invoice number (API.md).
"""

from __future__ import annotations

from api.access import BILLING_MANAGER, Route, roles
from api.operations import IDEMPOTENCY_KEY, operation
from api.responses import send_pdf
from backend.billing import corrections, idempotency, queries
from backend.billing.documents.stored_pdf import STORAGE_CONTEXT, verified_document
from backend.billing.errors import BillingPdfNotReady
from schemas.billing.invoices import CreditNoteIn, CreditNoteOut, InvoicesOut, InvoicesQuery, RefundIn, RefundOut

PARTIES = roles("industrial", "distributor", "admin", kyb_required=True)


class Invoices:
    @operation("List invoices",
               description="Newest first. Admins (`billing.manage.all`) see every invoice, others those their active "
               "organization issued or received. `kind` is repeatable (unknown values ignored, none means all): "
               "the industrial space asks `platform_sale` + `platform_credit_note`, the distributor space "
               "`supplier_self_billed` + `supplier_credit_note`. `limit` default 50, max 200.",
               tags=("billing",), query=InvoicesQuery, answer=InvoicesOut)
    def on_get(self, req, resp, query: dict) -> dict:
        return {"items": queries.list_invoices(principal=req.context.principal,
                                               kinds=queries.parse_kinds(query["kind"]), limit=query["limit"])}


class Invoice:
    def __init__(self, storage, config) -> None:
        self.storage = storage
        self.config = config

    @operation("Download an invoice PDF",
               description="The Factur-X PDF as an attachment, for an admin or the issuer or customer organization "
               "(403 for any other); 404 `BILLING_PDF_NOT_READY` while the PDF is not stored yet; 409 "
               "`DOCUMENT_INTEGRITY_FAILED` when the stored file is not the one recorded at issue (sha256).",
               tags=("billing",), produces="application/pdf")
    def on_get_download(self, req, resp, invoice_id: str) -> None:
        invoice = queries.downloadable_invoice(principal=req.context.principal, invoice_number=invoice_id)
        context, key = STORAGE_CONTEXT, invoice.pdf_storage_key
        if not self.storage.exists(context, key):
            raise BillingPdfNotReady("the invoice PDF is not ready yet", invoiceNumber=invoice.number)
        pdf = verified_document(self.storage, context, key, invoice.pdf_sha256,
                                user_id=req.context.principal.user_id, invoiceNumber=invoice.number)
        send_pdf(resp, pdf, f"{invoice.number}.pdf")

    @operation("Refund an invoice",
               description="`platform_sale` invoices only (else 409). Header `Idempotency-Key` required (400 when "
               "absent; a replay answers `idempotent: true`; another body 422; in flight 409). `amountCents` "
               "excludes tax: a `platform_credit_note` of that amount and a `refund` payment order of its amount "
               "including VAT; more than is left to refund is 409 `CONFLICT` (`over_refund`). Audited with the "
               "reason and the actor.",
               tags=("billing",), body=RefundIn, answer=RefundOut, headers=IDEMPOTENCY_KEY)
    def on_post_refund(self, req, resp, invoice_id: str, body: dict) -> corrections.Refunded:
        key = idempotency.check_key(req.get_header("Idempotency-Key"))
        principal = req.context.principal
        return corrections.refund_once(
            key=key,
            invoice_number=invoice_id, amount_cents=body["amountCents"], reason=body["reason"],
            method=body["paymentMethod"], user_id=principal.user_id, config=self.config,
        )

    @operation("Credit an invoice in full",
               description="Issues the credit note of what is left of the invoice (`platform_credit_note` or "
               "`supplier_credit_note`), marks the invoice `credited`, moves no money; audited with the reason.",
               tags=("billing",), body=CreditNoteIn, answer=CreditNoteOut, status=201)
    def on_post_credit_note(self, req, resp, invoice_id: str, body: dict) -> corrections.Credited:
        return corrections.credit_in_full(invoice_number=invoice_id, reason=body["reason"],
                                          user_id=req.context.principal.user_id, config=self.config)


def routes(deps) -> list[Route]:
    invoice = Invoice(deps.storage, deps.config)
    return [
        Route("/api/billing/invoices", Invoices(), PARTIES),
        Route("/api/billing/invoices/{invoice_id}/download", invoice, PARTIES, suffix="download"),
        Route("/api/billing/invoices/{invoice_id}/refund", invoice, BILLING_MANAGER, suffix="refund"),
        Route("/api/billing/invoices/{invoice_id}/credit-note", invoice, BILLING_MANAGER, suffix="credit_note"),
    ]
