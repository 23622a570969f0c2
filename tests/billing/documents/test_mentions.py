"""What a French accountant reads on each kind of document, read back from the PDF text and the
embedded XML: the seller's company mentions, one footer per kind and issuer, the place of the
service when it is not the buyer's address, a credit note's payee, the payment terms per kind.

The four PDFs are rendered once for the module, from the shipped default template and style (what
a database seeds) without the database, as `render_invoice_pdf` renders them."""

from __future__ import annotations

import dataclasses

import pytest
from lxml import etree

from backend.billing.documents import render
from backend.billing.documents.cii import build_cii
from backend.billing.documents.facturx import embed_facturx
from backend.billing.documents.snapshot import InvoiceSnapshot, PaymentMeans, PaymentMethod, ServicePlace
from backend.documents import rendering
from backend.documents.catalog import catalog_entry, default_style
from tests.billing.documents import invoice_samples as samples
from tests.billing.documents.facturx_check import check_pdf, check_xml
from tests.documents.conftest import flat, pdf_pages

NS = {"rsm": "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100",
      "ram": "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"}
SETTLEMENT = "rsm:SupplyChainTradeTransaction/ram:ApplicableHeaderTradeSettlement/"
PLATFORM_MENTIONS = "SAS au capital de 50 000,00 EUR, RCS Paris 732 829 320"
DISTRIBUTOR_MENTIONS = "SARL au capital de 8 000,00 EUR, RCS Annecy 443 061 841"
LABELS = {"380": "Facture", "381": "Avoir", "389": "Facture d'autofacturation", "261": "Avoir d'autofacturation"}


def render_pdf(snapshot: InvoiceSnapshot) -> bytes:
    entry = catalog_entry(render.TEMPLATE_KEY)
    pdf = rendering.render_pdf(entry, entry.default_content(), default_style(), render.template_context(snapshot),
                               None, version=1, title=snapshot.document_label,
                               pdf_options=render.pdf_options(snapshot))
    return embed_facturx(pdf, build_cii(snapshot), moment=snapshot.issued_at)


@dataclasses.dataclass(frozen=True)
class Rendered:
    snapshot: InvoiceSnapshot
    pdf: bytes
    pages: list[str]
    xml: etree._Element

    def note(self, code: str) -> str:
        (text,) = self.xml.xpath(f"rsm:ExchangedDocument/ram:IncludedNote[ram:SubjectCode='{code}']/ram:Content/text()",
                                 namespaces=NS)
        return text


@pytest.fixture(scope="module")
def documents() -> dict[str, Rendered]:
    rendered = {}
    for type_code, sample in samples.ALL_KINDS.items():
        snapshot = sample()
        pdf = render_pdf(snapshot)
        rendered[type_code] = Rendered(snapshot, pdf, pdf_pages(pdf), etree.fromstring(check_pdf(pdf)))
    return rendered


@pytest.mark.parametrize(("type_code", "mentions"), [
    ("380", PLATFORM_MENTIONS), ("381", PLATFORM_MENTIONS), ("389", DISTRIBUTOR_MENTIONS),
    ("261", DISTRIBUTOR_MENTIONS)])
def test_the_sellers_company_mentions_are_on_every_kind_page_and_xml(documents, type_code, mentions):
    document = documents[type_code]
    text = " ".join(document.pages)
    assert mentions in text  # under the seller, and in the footer
    assert text.count(mentions) == 2
    assert flat(document.note("REG")).endswith(f"{document.snapshot.seller.name} : {mentions}.")  # BT-33


@pytest.mark.parametrize("type_code", sorted(LABELS))
def test_each_kind_has_its_footer_naming_its_seller(documents, type_code):
    document = documents[type_code]
    seller = document.snapshot.seller
    footer = f"{LABELS[type_code]} {flat(seller.identity_line())}"
    if type_code in ("389", "261"):  # issued by the platform in the distributor's name
        issued = "Avoir émis" if type_code == "261" else "Facture émise"
        footer += f" {issued} par Vitrine SAS au nom et pour le compte de Supermarché du Lac"
    for page in document.pages:
        assert page.endswith(f"{footer} 1 / {len(document.pages)}"), page[-300:]
    assert seller.identity_line().startswith(seller.name)
    assert f"SIRET {seller.siret}" in seller.identity_line()


def test_the_place_of_the_service_is_printed_only_when_it_is_not_the_buyers_address(documents):
    sale = " ".join(documents["380"].pages)
    assert "Lieu de la prestation : Supermarché du Lac, 1 quai du Lac, 74000 Annecy." in sale
    at_the_buyer = samples.sale(service_place=ServicePlace("Entrepôt", samples.INDUSTRIAL.address))
    assert "deliveryPlace" not in render.template_context(at_the_buyer)
    assert "Lieu de la prestation" not in render.fallback_html(at_the_buyer)
    assert "Lieu de la prestation" in render.fallback_html(samples.sale())
    ship_to = etree.fromstring(build_cii(at_the_buyer)).xpath(
        "//ram:ShipToTradeParty/ram:Name/text()", namespaces=NS)
    assert ship_to == ["Entrepôt"]  # the XML carries it either way (BG-13)


def test_a_credit_notes_payee_is_the_customer_or_nobody(documents):
    means = SETTLEMENT + "ram:SpecifiedTradeSettlementPaymentMeans/"
    refund = documents["381"].xml
    assert refund.xpath(means + "ram:TypeCode/text()", namespaces=NS) == ["58"]
    assert refund.xpath(means + "ram:PayeePartyCreditorFinancialAccount/ram:IBANID/text()",
                        namespaces=NS) == [samples.INDUSTRIAL.iban]  # BT-84: the money goes to the customer
    assert f"Montant remboursé par virement sur le compte IBAN {samples.INDUSTRIAL.iban}." in \
        " ".join(documents["381"].pages)
    assert documents["261"].xml.xpath(SETTLEMENT + "ram:SpecifiedTradeSettlementPaymentMeans", namespaces=NS) == []
    assert "Montant à déduire des sommes dues." in " ".join(documents["261"].pages)


def test_payment_terms_per_kind(documents):
    terms = {code: documents[code].xml.xpath(SETTLEMENT + "ram:SpecifiedTradePaymentTerms/ram:Description/text()",
                                             namespaces=NS)[0] for code in LABELS}
    assert terms["380"] == "Facture réglée par prélèvement SEPA à la réservation."
    assert terms["389"].startswith(f"Règlement par virement sur le compte IBAN {samples.DISTRIBUTOR.iban} à "
                                   "l'échéance, qui est la fin du délai de contestation")
    for code in ("380", "389"):  # penalties from the day after the due date, on invoices only
        text = " ".join(documents[code].pages)
        assert "exigibles à compter du lendemain de la date d'échéance" in text and "40 €" in text
        assert "Échéance :" in text
        assert "à compter du lendemain de la date d'échéance" in documents[code].note("PMD")
    for code in ("381", "261"):
        text = " ".join(documents[code].pages)
        assert "pénalités" not in text and "Échéance" not in text and "40 €" not in text
    assert "17 janvier 2027" in " ".join(documents["389"].pages)


def test_a_seller_without_company_mentions_prints_none():
    bare = dataclasses.replace(samples.PLATFORM, legal_form=None, share_capital_cents=None, registration=None)
    assert bare.company_mentions is None
    assert bare.identity_line() == "Vitrine SAS · SIRET 73282932000074 · 8 avenue de l'Opéra, 75001 Paris"
    assert "sellerCompanyMentions" not in render.template_context(samples.sale(seller=bare))
    partial = dataclasses.replace(bare, registration="RM Annecy 443 061 841")
    assert partial.company_mentions == "RM Annecy 443 061 841"
    assert dataclasses.replace(bare, legal_form="EURL", share_capital_cents=100).company_mentions == \
        "EURL au capital de 1,00 EUR"


@pytest.fixture(scope="module")
def reverse_charged() -> Rendered:
    snapshot = samples.reverse_charged_sale()
    pdf = render_pdf(snapshot)
    return Rendered(snapshot, pdf, pdf_pages(pdf), etree.fromstring(check_pdf(pdf)))


def test_a_sale_to_a_buyer_of_another_member_state_is_reverse_charged(reverse_charged):
    xml, text = reverse_charged.xml, " ".join(reverse_charged.pages)
    tax = SETTLEMENT + "ram:ApplicableTradeTax/"
    assert xml.xpath(tax + "ram:CategoryCode/text()", namespaces=NS) == ["AE"]
    assert xml.xpath(tax + "ram:CalculatedAmount/text()", namespaces=NS) == ["0.00"]
    assert xml.xpath(tax + "ram:ExemptionReason/text()", namespaces=NS) == ["Autoliquidation"]
    assert xml.xpath("//ram:SpecifiedLineTradeSettlement/ram:ApplicableTradeTax/ram:CategoryCode/text()",
                     namespaces=NS) == ["AE"]
    assert xml.xpath("//ram:BuyerTradeParty/ram:SpecifiedTaxRegistration/ram:ID/text()",
                     namespaces=NS) == ["BE0403019261"]
    assert reverse_charged.note("REG").startswith("Prestation de services. Autoliquidation.")
    for mention in ("Autoliquidation : TVA due par le preneur", "N° TVA intracommunautaire BE0403019261",
                    "TVA 0 %", "Total TTC 1 200,00 €"):
        assert mention in text, mention


@pytest.mark.parametrize(("country", "number", "rate_bps", "category"), [
    ("BE", "BE0403019262", 0, "S"),  # a wrong check digit: no reverse charge
    ("BE", None, 0, "S"),
    ("CH", "CHE116281710", 0, "S"),  # not a member state
    ("BE", "BE0403019261", 2000, "S"),  # charged French VAT: standard rate
])
def test_no_reverse_charge_without_a_valid_vat_number_of_another_member_state(country, number, rate_bps, category):
    buyer = dataclasses.replace(samples.EU_BUYER, vat_number=number,
                                address=dataclasses.replace(samples.EU_BUYER.address, country_code=country))
    snapshot = samples.reverse_charged_sale(buyer=buyer, vat_rate_bps=rate_bps,
                                            paid_cents=120_000 if rate_bps == 0 else 144_000)
    assert (snapshot.reverse_charge, snapshot.vat_category) == (False, category)
    assert "vatMention" not in render.template_context(snapshot)


def test_a_refund_to_a_customer_whose_account_is_unknown_names_no_payee():
    snapshot = samples.credit_note(payment_means=PaymentMeans(PaymentMethod.CREDIT_TRANSFER))
    xml = build_cii(snapshot)
    check_xml(xml)
    assert etree.fromstring(xml).xpath(SETTLEMENT + "ram:SpecifiedTradeSettlementPaymentMeans", namespaces=NS) == []
    assert render.template_context(snapshot)["amountDueLabel"] == "Montant remboursé"
