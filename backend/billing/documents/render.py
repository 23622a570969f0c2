"""The invoice PDF: the `invoice` template rendered as PDF/A-3, the Factur-X XML embedded.

`render_invoice_pdf(snapshot)` renders the `invoice` template (Specification A's template
service: the template and style versions frozen on the invoice at issue, else the current published
ones) with weasyprint's `pdf/a-3b` variant, then `embed_facturx` attaches the CII XML. When the
template cannot render (no published version, a template error, a refused value), a minimal
fallback document built here without the template carries the same XML, and
`billing.invoice.pdf_generation_failed` is logged: the XML holds the legal content either way.

Everything derives from the snapshot and the frozen versions (the PDF identifier from the
invoice number, dates from its issue time), so regenerating an invoice gives byte-identical files.
"""

from __future__ import annotations

import hashlib
import html
import os
from dataclasses import dataclass

from backend.billing.documents.cii import build_cii
from backend.billing.documents.facturx import embed_facturx
from backend.billing.documents.snapshot import OPERATION_CATEGORY, InvoiceSnapshot, Party
from backend.billing.documents.terms import amount_due_label, late_payment_terms, payment_terms
from backend.config import Config
from backend.documents import rendering
from backend.documents.formatting import format_date, format_euros
from backend.logs import log_event
from storage import Storage

TEMPLATE_KEY = "invoice"
# What a reverse-charged invoice says of its VAT (CGI art. 242 nonies A, I-13°; art. 283-2).
REVERSE_CHARGE_TEXT = ("Autoliquidation : TVA due par le preneur (article 283-2 du code général des impôts, "
                       "article 196 de la directive 2006/112/CE).")
FAILURE_SCOPE = "billing.invoice.pdf_generation_failed"
# When weasyprint subsets fonts with fontTools (no libharfbuzz-subset), fontTools stamps each
# subset's `head.modified` with the current time unless SOURCE_DATE_EPOCH (the reproducible-builds
# convention) says otherwise: a fixed value keeps regenerated invoices byte-identical. An
# operator's own SOURCE_DATE_EPOCH is kept.
FONT_TIMESTAMP_EPOCH = "1767225600"  # 2026-01-01T00:00:00Z


@dataclass(frozen=True)
class InvoicePdf:
    content: bytes
    xml: bytes
    fallback: bool  # True when the template failed and the minimal document stands in

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()


def pdf_options(snapshot: InvoiceSnapshot) -> dict:
    """weasyprint options: PDF/A-3b (embedded fonts, sRGB output intent, XMP identification) and
    a file identifier derived from the invoice number rather than drawn at random."""
    identifier = hashlib.sha256(snapshot.invoice_number.encode("utf-8")).hexdigest()[:32]
    return {"pdf_variant": "pdf/a-3b", "pdf_identifier": identifier.encode("ascii")}


def template_context(snapshot: InvoiceSnapshot) -> dict:
    """The `invoice` template's variables (names declared in documents/entries/invoice.json)."""
    seller, buyer = snapshot.seller, snapshot.buyer
    context = {
        "documentLabel": snapshot.document_label,
        "invoiceNumber": snapshot.invoice_number,
        "issueDate": snapshot.issue_date.isoformat(),
        "dueDate": snapshot.due_date.isoformat(),
        "sellerName": seller.name,
        "sellerAddress": seller.address.one_line(),
        "sellerSiren": seller.siren or "non renseigné",
        "sellerSiret": seller.siret or "non renseigné",
        "buyerName": buyer.name,
        "buyerAddress": buyer.address.one_line(),
        "lines": [
            {"label": line.label, "quantity": line.quantity, "unitPriceCents": line.unit_price_cents,
             "totalCents": line.total_cents}
            for line in snapshot.lines
        ],
        "amountExclTaxCents": snapshot.amount_excl_tax_cents,
        "vatRatePercent": float(snapshot.vat_rate_bps) / 100,
        "vatAmountCents": snapshot.vat_amount_cents,
        "amountInclTaxCents": snapshot.amount_incl_tax_cents,
        "amountDueCents": snapshot.due_cents,
        "amountDueLabel": amount_due_label(snapshot),
        "selfBilled": snapshot.is_self_billed,
        "creditNote": snapshot.is_credit_note,
        "operationCategory": OPERATION_CATEGORY,
        "vatOnDebits": snapshot.seller.vat_on_debits,
        "paymentTerms": payment_terms(snapshot),
        # The footer (the frame's lines; its title is the document's label): the seller's identity.
        "footerTextLine1": seller.identity_line(),
    }
    place = snapshot.delivery_place
    optional = {
        "footerTextLine2": issued_for(snapshot) if snapshot.is_self_billed else None,
        "sellerCompanyMentions": seller.company_mentions,
        "latePaymentTerms": late_payment_terms(snapshot),
        "deliveryPlace": place and f"{place.name}, {place.address.one_line()}",
        "vatMention": REVERSE_CHARGE_TEXT if snapshot.reverse_charge else None,
        "sellerVatNumber": seller.vat_number,
        "buyerSiren": buyer.siren,
        "buyerSiret": buyer.siret,
        "buyerVatNumber": buyer.vat_number,
        "reservationReference": snapshot.reservation_reference,
        "periodStart": snapshot.period_start and snapshot.period_start.isoformat(),
        "periodEnd": snapshot.period_end and snapshot.period_end.isoformat(),
        "amountPaidCents": snapshot.paid_cents or None,
    }
    if snapshot.preceding_invoice:
        optional["precedingInvoiceNumber"] = snapshot.preceding_invoice.number
        optional["precedingInvoiceDate"] = snapshot.preceding_invoice.issue_date.isoformat()
    context.update({key: value for key, value in optional.items() if value is not None})
    return context


def issued_for(snapshot: InvoiceSnapshot) -> str:
    """"Facture émise par <platform> au nom et pour le compte de <distributor>": a self-billed
    document's footer says who issued it in the seller's name."""
    document = "Avoir émis" if snapshot.is_credit_note else "Facture émise"
    return f"{document} par {snapshot.buyer.name} au nom et pour le compte de {snapshot.seller.name}"


def render_invoice_pdf(snapshot: InvoiceSnapshot, *, storage: Storage, config: Config | None = None,
                       template_version: int | None = None, style_version: int | None = None) -> InvoicePdf:
    """The Factur-X PDF of `snapshot`: the template rendering, or the fallback when it fails. The
    template and style versions frozen on an issued invoice are given (None: the current ones)."""
    os.environ.setdefault("SOURCE_DATE_EPOCH", FONT_TIMESTAMP_EPOCH)
    xml = build_cii(snapshot)
    fallback = False
    try:
        pdf = rendering.render_document(TEMPLATE_KEY, template_context(snapshot), storage=storage, config=config,
                                        pdf_options=pdf_options(snapshot), template_version=template_version,
                                        style_version=style_version, title=snapshot.document_label)
    except Exception as exc:
        log_event(FAILURE_SCOPE, "invoice template failed, fallback document used", "error",
                  invoiceNumber=snapshot.invoice_number, kind=snapshot.kind, fallback=True,
                  error=f"{type(exc).__name__}: {exc}")
        pdf = render_fallback_pdf(snapshot)
        fallback = True
    return InvoicePdf(embed_facturx(pdf, xml, moment=snapshot.issued_at), xml, fallback)


def render_fallback_pdf(snapshot: InvoiceSnapshot) -> bytes:
    """The minimal PDF/A-3 document (without the template), before the XML is embedded."""
    os.environ.setdefault("SOURCE_DATE_EPOCH", FONT_TIMESTAMP_EPOCH)
    return rendering.html_to_pdf(fallback_html(snapshot), **pdf_options(snapshot))


def fallback_html(snapshot: InvoiceSnapshot) -> str:
    """A plain French document with the legal mentions, built without the template service."""
    def party(title: str, who: Party) -> str:
        ids = [f"SIREN {who.siren}" if who.siren else "", f"SIRET {who.siret}" if who.siret else "",
               f"TVA {who.vat_number}" if who.vat_number else ""]
        lines = [who.name, who.company_mentions, who.address.one_line(), " — ".join(i for i in ids if i)]
        return f"<td><strong>{title}</strong><br>" + "<br>".join(html.escape(line) for line in lines if line) + "</td>"

    rows = "".join(
        f"<tr><td>{html.escape(line.label)}</td><td>{line.quantity}</td>"
        f"<td>{format_euros(line.unit_price_cents)}</td><td>{format_euros(line.total_cents)}</td></tr>"
        for line in snapshot.lines
    )
    mentions = []
    if snapshot.is_self_billed:
        mentions.append(f"Autofacturation : {issued_for(snapshot)}, en vertu d'un mandat d'autofacturation "
                        "(article 289, I-2 du code général des impôts).")
    if snapshot.preceding_invoice:
        mentions.append(f"Avoir sur la facture n° {snapshot.preceding_invoice.number} du "
                        f"{format_date(snapshot.preceding_invoice.issue_date)}.")
    period = (f" — prestation du {format_date(snapshot.period_start)} au {format_date(snapshot.period_end)}"
              if snapshot.period_start and snapshot.period_end else "")
    due = "" if snapshot.is_credit_note else f" Échéance : {format_date(snapshot.due_date)}."
    place = snapshot.delivery_place
    mentions += [
        f"Date d'émission : {format_date(snapshot.issue_date)}{period}.{due}",
        *([f"Lieu de la prestation : {place.name}, {place.address.one_line()}."] if place else []),
        " ".join(f"{mention}." for mention in snapshot.legal_mentions),
        *([REVERSE_CHARGE_TEXT] if snapshot.reverse_charge else []),
        payment_terms(snapshot),
        *filter(None, [late_payment_terms(snapshot)]),  # a credit note asks no payment: no penalties
    ]
    rate = f"{snapshot.vat_rate_bps / 100:g}".replace(".", ",")
    title = f"{snapshot.document_label} n° {snapshot.invoice_number}"
    return (
        '<!doctype html><html lang="fr"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>body{{font-family:sans-serif;font-size:10pt}}"
        "table{width:100%;border-collapse:collapse}td{vertical-align:top;padding:4px;border:1px solid #ccc}"
        "</style></head><body>"
        f"<h1>{html.escape(title)}</h1>"
        f"<table><tr>{party('Vendeur', snapshot.seller)}{party('Acheteur', snapshot.buyer)}</tr></table>"
        "<table><tr><td>Désignation</td><td>Quantité</td><td>Prix unitaire HT</td><td>Total HT</td></tr>"
        f"{rows}</table>"
        f"<p>Total HT : {format_euros(snapshot.amount_excl_tax_cents)}<br>"
        f"TVA {rate} % : {format_euros(snapshot.vat_amount_cents)}<br>"
        f"<strong>Total TTC : {format_euros(snapshot.amount_incl_tax_cents)}</strong><br>"
        f"{amount_due_label(snapshot)} : {format_euros(snapshot.due_cents)}</p>"
        + "".join(f"<p>{html.escape(text)}</p>" for text in mentions)
        + f"<p><small>{html.escape(snapshot.seller.identity_line())}</small></p></body></html>"
    )
