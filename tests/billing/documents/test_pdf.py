"""The invoice PDF: the `invoice` template as PDF/A-3 with the Factur-X XML embedded as a reader
expects it, byte-identical when regenerated, a fallback document when the template fails, the
storage rules."""

from __future__ import annotations

import dataclasses
import hashlib
import io

import pikepdf
import pytest
from lxml import etree

from backend.billing.documents import render
from backend.billing.documents.cii import build_cii
from backend.billing.documents.facturx import FX_NAMESPACE, embed_facturx
from backend.billing.documents.render import render_invoice_pdf
from backend.billing.documents.stored_pdf import store_invoice_pdf
from backend.errors import PayloadTooLarge, ValidationError
from tests.billing.documents import invoice_samples as samples
from tests.billing.documents.facturx_check import FacturXInvalid, check_pdf
from tests.documents.conftest import pdf_pages


@pytest.mark.parametrize("type_code", sorted(samples.ALL_KINDS))
def test_every_kind_gives_a_valid_facturx_pdf(storage, seeded, type_code):
    snapshot = samples.ALL_KINDS[type_code]()
    document = render_invoice_pdf(snapshot, storage=storage)
    assert not document.fallback
    assert check_pdf(document.content) == build_cii(snapshot)


def test_the_attachment_and_xmp_are_what_factur_x_asks(storage, seeded):
    document = render_invoice_pdf(samples.sale(), storage=storage)
    with pikepdf.open(io.BytesIO(document.content)) as pdf:
        (filespec,) = pdf.Root.AF
        assert filespec.AFRelationship == pikepdf.Name.Alternative
        assert str(filespec.F) == str(filespec.UF) == "factur-x.xml"
        embedded = filespec.EF.F
        assert embedded.Subtype == pikepdf.Name("/text/xml")
        assert embedded.read_bytes() == document.xml
        assert int(embedded.Params.Size) == len(document.xml)
        names = pdf.Root.Names.EmbeddedFiles.Names
        assert str(names[0]) == "factur-x.xml" and names[1].objgen == filespec.objgen
        assert pdf.Root.OutputIntents[0].S == pikepdf.Name.GTS_PDFA1  # weasyprint's PDF/A-3b intent
        fonts = [font for page in pdf.pages for font in page.Resources.Font.values()]
        assert fonts and all("/FontFile2" in font.DescendantFonts[0].FontDescriptor
                             or "/FontFile3" in font.DescendantFonts[0].FontDescriptor for font in fonts)
        assert str(pdf.docinfo.CreationDate) == str(pdf.docinfo.ModDate) == "D:20261122093000Z"
        with pdf.open_metadata(set_pikepdf_as_editor=False, update_docinfo=False) as xmp:
            assert xmp["pdfaid:part"] == "3" and xmp["pdfaid:conformance"] == "B"
            assert xmp[f"{{{FX_NAMESPACE}}}DocumentType"] == "INVOICE"
            assert xmp[f"{{{FX_NAMESPACE}}}DocumentFileName"] == "factur-x.xml"
            assert xmp[f"{{{FX_NAMESPACE}}}Version"] == "1.0"
            assert xmp[f"{{{FX_NAMESPACE}}}ConformanceLevel"] == "BASIC"
        schema = etree.fromstring(pdf.Root.Metadata.read_bytes().split(b"?>", 1)[1].rsplit(b"<?xpacket", 1)[0])
        assert schema.xpath("//*[local-name()='namespaceURI']/text()") == [FX_NAMESPACE]


def test_the_pdf_reads_in_french_with_the_legal_mentions(storage, seeded):
    text = " ".join(pdf_pages(render_invoice_pdf(samples.sale(), storage=storage).content))
    for mention in ("Facture n° FAC-RES-2026-000123", "Vitrine SAS", "Fromagerie des Alpes SAS", "SIREN 732829320",
                    "SIRET 55210055400013", "FR44732829320", "FR03552100554", "22 novembre 2026",
                    "1er décembre 2026", "14 décembre 2026", "1 200,00 €", "TVA 20 %", "240,00 €", "1 440,00 €",
                    "Net à payer", "0,00 €", "prélèvement SEPA", "40 €", "trois fois le taux d'intérêt légal",
                    "Pas d'escompte", "Catégorie de l'opération : Prestation de services."):
        assert mention in text, mention
    assert "Autofacturation" not in text and "débits" not in text
    self_billed = " ".join(pdf_pages(render_invoice_pdf(samples.self_billed(), storage=storage).content))
    assert "Autofacturation" in self_billed and "Facture d'autofacturation" in self_billed
    assert "Prestation de services" in self_billed


@pytest.mark.parametrize(("sample", "amount_label"), [
    (samples.credit_note, "Montant remboursé 360,00 €"),
    (samples.self_billed_credit_note, "Montant à déduire 1 200,00 €"),
])
@pytest.mark.parametrize("template", [True, False], ids=["template", "fallback"])
def test_a_credit_note_reads_as_one(storage, sample, amount_label, template):
    if template:
        from backend.documents.seeding import seed_default_versions

        seed_default_versions(storage)
    snapshot = sample()
    document = render_invoice_pdf(snapshot, storage=storage)
    assert document.fallback is not template
    text = " ".join(" ".join(pdf_pages(document.content)).split())
    corrected = f"Avoirsurlafacturen°{snapshot.preceding_invoice.number}"
    assert text.startswith("Avoir") and corrected in "".join(text.split())
    assert amount_label in text.replace(" : ", " ")
    for absent in ("Net à payer", "pénalités", "40 €", "escompte", "Échéance"):
        assert absent not in text, absent
    assert "Prestation de services" in text and "facture émise" not in text


@pytest.mark.parametrize("template", [True, False], ids=["template", "fallback"])
def test_the_option_for_vat_on_debits_is_printed_when_the_seller_took_it(storage, template):
    if template:
        from backend.documents.seeding import seed_default_versions

        seed_default_versions(storage)
    snapshot = samples.sale(seller=dataclasses.replace(samples.PLATFORM, vat_on_debits=True))
    document = render_invoice_pdf(snapshot, storage=storage)
    assert document.fallback is not template and check_pdf(document.content) == build_cii(snapshot)
    text = " ".join(" ".join(pdf_pages(document.content)).split())
    assert "Option pour le paiement de la taxe d'après les débits" in text


def test_regeneration_is_byte_identical(storage, seeded):
    first = render_invoice_pdf(samples.self_billed(), storage=storage)
    second = render_invoice_pdf(samples.self_billed(), storage=storage)
    assert first.content == second.content
    assert first.sha256 == second.sha256 == hashlib.sha256(second.content).hexdigest()
    assert render_invoice_pdf(samples.sale(), storage=storage).sha256 != first.sha256


@pytest.mark.parametrize("type_code", sorted(samples.ALL_KINDS))
def test_a_template_failure_gives_a_fallback_that_still_passes(storage, log_lines, type_code):
    snapshot = samples.ALL_KINDS[type_code]()  # nothing seeded: no published `invoice` version
    document = render_invoice_pdf(snapshot, storage=storage)
    assert document.fallback
    assert check_pdf(document.content) == build_cii(snapshot)
    text = " ".join(pdf_pages(document.content))
    assert snapshot.invoice_number in "".join(text.split()) and "<strong>" not in text
    assert ("40 €" in text) is not snapshot.is_credit_note  # a credit note lists no late-payment terms
    assert ("Autofacturation" in text) == snapshot.is_self_billed
    (failure,) = [line for line in log_lines() if line["scope"] == "billing.invoice.pdf_generation_failed"]
    assert failure["level"] == "error" and failure["invoiceNumber"] == snapshot.invoice_number
    assert render_invoice_pdf(snapshot, storage=storage).content == document.content


def test_a_pdf_with_a_broken_mandatory_field_fails_the_check():
    snapshot = samples.sale()
    root = etree.fromstring(build_cii(snapshot))
    ram = "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"
    buyer = root.find(f".//{{{ram}}}BuyerTradeParty")
    buyer.remove(buyer.find(f"{{{ram}}}Name"))
    broken = embed_facturx(render.render_fallback_pdf(snapshot),
                           etree.tostring(root, xml_declaration=True, encoding="UTF-8"), moment=snapshot.issued_at)
    with pytest.raises(FacturXInvalid, match="Buyer name"):
        check_pdf(broken)


def test_storage_overwrites_and_refuses_what_is_not_a_small_pdf(storage, seeded):
    first = render_invoice_pdf(samples.sale(), storage=storage).content
    stored = store_invoice_pdf(storage, "FAC-RES-2026-000123", first)
    assert (stored.context, stored.key) == ("billing-invoice-pdf", "billing/invoices/FAC-RES-2026-000123.pdf")
    again = store_invoice_pdf(storage, "FAC-RES-2026-000123", first)
    assert again.sha256 == stored.sha256 == hashlib.sha256(first).hexdigest()
    assert storage.read_bytes("billing-invoice-pdf", "billing/invoices/FAC-RES-2026-000123.pdf") == first
    with pytest.raises(PayloadTooLarge):
        store_invoice_pdf(storage, "FAC-RES-2026-000124", b"%PDF-" + b"0" * (5 * 1024 * 1024))
    with pytest.raises(ValidationError):
        store_invoice_pdf(storage, "FAC-RES-2026-000124", b"<html>not a pdf</html>")
    assert not storage.exists("billing-invoice-pdf", "billing/invoices/FAC-RES-2026-000124.pdf")
