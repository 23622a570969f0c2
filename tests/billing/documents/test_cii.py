"""The Factur-X BASIC XML of every invoice kind: its content, and the published rules it passes
(the BASIC XSD, the Factur-X schematron, the French BR-FR Flux 2 schematron), and fails when broken."""

from __future__ import annotations

import dataclasses

import pytest
from lxml import etree

from backend.billing import vat
from backend.billing.documents.cii import build_cii
from backend.billing.documents.snapshot import ElectronicAddress, InvoiceSnapshot
from tests.billing.documents import invoice_samples as samples
from tests.billing.documents.facturx_check import FacturXInvalid, check_xml, schematron_failures

NS = {"rsm": "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100",
      "ram": "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100",
      "udt": "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100",
      "qdt": "urn:un:unece:uncefact:data:standard:QualifiedDataType:100"}
HEADER = "rsm:SupplyChainTradeTransaction/ram:ApplicableHeaderTradeSettlement/"
AGREEMENT = "rsm:SupplyChainTradeTransaction/ram:ApplicableHeaderTradeAgreement/"


def values(root: etree._Element, path: str) -> list[str]:
    return [element.text for element in root.xpath(path, namespaces=NS)]


def value(root: etree._Element, path: str) -> str:
    found = values(root, path)
    assert len(found) == 1, (path, found)
    return found[0]


@pytest.mark.parametrize("type_code", sorted(samples.ALL_KINDS))
def test_every_kind_passes_the_xsd_the_facturx_schematron_and_br_fr(type_code):
    check_xml(build_cii(samples.ALL_KINDS[type_code]()))


@pytest.mark.parametrize(("type_code", "notes", "framework", "seller", "buyer", "totals"), [
    ("380", ["PMD", "PMT", "AAB", "REG", "BAR"], "S2", "Vitrine SAS", "Fromagerie des Alpes SAS",
     ("1200.00", "240.00", "1440.00", "1440.00", "0.00")),
    ("381", ["PMD", "PMT", "AAB", "REG", "BAR"], "S1", "Vitrine SAS", "Fromagerie des Alpes SAS",
     ("300.00", "60.00", "360.00", None, "360.00")),
    ("389", ["ABL", "PMD", "PMT", "AAB", "REG", "BAR"], "S1", "Supermarché du Lac", "Vitrine SAS",
     ("1000.00", "200.00", "1200.00", None, "1200.00")),
    ("261", ["ABL", "PMD", "PMT", "AAB", "REG", "BAR"], "S1", "Supermarché du Lac", "Vitrine SAS",
     ("1000.00", "200.00", "1200.00", None, "1200.00")),
])
def test_xml_snapshot_per_kind(type_code, notes, framework, seller, buyer, totals):
    snapshot = samples.ALL_KINDS[type_code]()
    root = etree.fromstring(build_cii(snapshot))
    assert value(root, "rsm:ExchangedDocument/ram:TypeCode") == type_code
    assert value(root, "rsm:ExchangedDocument/ram:ID") == snapshot.invoice_number
    assert value(root, "rsm:ExchangedDocument/ram:IssueDateTime/udt:DateTimeString") == \
        snapshot.issue_date.strftime("%Y%m%d")
    assert value(root, "rsm:ExchangedDocumentContext/ram:BusinessProcessSpecifiedDocumentContextParameter/ram:ID") \
        == framework
    assert values(root, "rsm:ExchangedDocument/ram:IncludedNote/ram:SubjectCode") == notes
    if "ABL" in notes:
        assert value(root, "rsm:ExchangedDocument/ram:IncludedNote[ram:SubjectCode='ABL']/ram:Content") \
            == "Autofacturation"
    recovery = value(root, "rsm:ExchangedDocument/ram:IncludedNote[ram:SubjectCode='PMT']/ram:Content")
    if type_code in ("381", "261"):  # a credit note asks no payment: BR-FR-05's notes say so
        for code in ("PMD", "PMT", "AAB"):
            assert value(root, f"rsm:ExchangedDocument/ram:IncludedNote[ram:SubjectCode='{code}']/ram:Content") \
                .startswith("Sans objet : un avoir n'appelle aucun paiement")
        assert "40 €" not in recovery
    else:
        assert "40 €" in recovery
    assert value(root, "rsm:ExchangedDocument/ram:IncludedNote[ram:SubjectCode='REG']/ram:Content") \
        == f"Prestation de services. {seller} : {snapshot.seller.company_mentions}."
    assert values(root, HEADER + "ram:ApplicableTradeTax/ram:DueDateTypeCode") == []  # BT-8: no option on debits
    assert value(root, AGREEMENT + "ram:SellerTradeParty/ram:Name") == seller
    assert value(root, AGREEMENT + "ram:BuyerTradeParty/ram:Name") == buyer
    for party, data in (("Seller", snapshot.seller), ("Buyer", snapshot.buyer)):
        path = AGREEMENT + f"ram:{party}TradeParty/"
        assert value(root, path + "ram:SpecifiedLegalOrganization/ram:ID[@schemeID='0002']") == data.siren
        assert value(root, path + "ram:GlobalID[@schemeID='0009']") == data.siret
        assert value(root, path + "ram:SpecifiedTaxRegistration/ram:ID[@schemeID='VA']") == data.vat_number
        assert value(root, path + "ram:URIUniversalCommunication/ram:URIID") == data.electronic_address.uri
    summation = HEADER + "ram:SpecifiedTradeSettlementHeaderMonetarySummation/"
    basis, tax, grand, prepaid, due = totals
    assert value(root, summation + "ram:TaxBasisTotalAmount") == basis
    assert value(root, summation + "ram:TaxTotalAmount[@currencyID='EUR']") == tax
    assert value(root, summation + "ram:GrandTotalAmount") == grand
    assert values(root, summation + "ram:TotalPrepaidAmount") == ([prepaid] if prepaid else [])
    assert value(root, summation + "ram:DuePayableAmount") == due
    assert value(root, HEADER + "ram:ApplicableTradeTax/ram:RateApplicablePercent") == "20.00"
    preceding = values(root, HEADER + "ram:InvoiceReferencedDocument/ram:IssuerAssignedID")
    assert preceding == ([snapshot.preceding_invoice.number] if type_code in ("381", "261") else [])


@pytest.mark.parametrize("type_code", sorted(samples.ALL_KINDS))
def test_the_sellers_option_for_vat_on_debits_is_a_mention_and_bt_8(type_code):
    platform = dataclasses.replace(samples.PLATFORM, vat_on_debits=True)
    snapshot = samples.ALL_KINDS[type_code]()
    platform_sells = snapshot.seller.name == platform.name
    changed = dataclasses.replace(snapshot, **({"seller": platform} if platform_sells else {"buyer": platform}))
    xml = build_cii(changed)
    check_xml(xml)
    root = etree.fromstring(xml)
    mentions = value(root, "rsm:ExchangedDocument/ram:IncludedNote[ram:SubjectCode='REG']/ram:Content")
    tax_due = values(root, HEADER + "ram:ApplicableTradeTax/ram:DueDateTypeCode")
    if platform_sells:  # the platform's option is on its own invoices and credit notes
        assert mentions.startswith("Prestation de services. Option pour le paiement de la taxe d'après les débits. ")
        assert tax_due == ["5"]
    else:  # a self-billed document's seller is the distributor, whose option the platform does not know
        assert "débits" not in mentions and tax_due == []


def test_vat_figures_are_the_shared_function():
    snapshot = samples.sale(lines=(dataclasses.replace(samples.LINE, unit_price_cents=14_814, total_cents=14_814),),
                            amount_excl_tax_cents=14_814, paid_cents=17_777)
    root = etree.fromstring(build_cii(snapshot))
    assert vat.vat_amount_cents(14_814, 2000) == 2963  # 2962.8 half up
    assert value(root, HEADER + "ram:ApplicableTradeTax/ram:CalculatedAmount") == "29.63"
    assert value(root, HEADER + "ram:SpecifiedTradeSettlementHeaderMonetarySummation/ram:GrandTotalAmount") == "177.77"
    check_xml(build_cii(snapshot))


def test_direct_debit_carries_mandate_creditor_and_debited_account():
    root = etree.fromstring(build_cii(samples.sale()))
    means = HEADER + "ram:SpecifiedTradeSettlementPaymentMeans/"
    assert value(root, means + "ram:TypeCode") == "59"
    assert value(root, HEADER + "ram:SpecifiedTradePaymentTerms/ram:DirectDebitMandateID") == "VIT-SEPA-552100554-0001"
    assert value(root, HEADER + "ram:CreditorReferenceID") == "FR12ZZZ123456"
    assert value(root, means + "ram:PayerPartyDebtorFinancialAccount/ram:IBANID") == samples.INDUSTRIAL.iban
    transfer = etree.fromstring(build_cii(samples.self_billed()))
    assert value(transfer, means + "ram:TypeCode") == "58"
    assert value(transfer, means + "ram:PayeePartyCreditorFinancialAccount/ram:IBANID") == samples.DISTRIBUTOR.iban


def test_same_snapshot_same_bytes():
    assert build_cii(samples.self_billed()) == build_cii(samples.self_billed())


def _without(xml: bytes, path: str) -> bytes:
    root = etree.fromstring(xml)
    for element in root.xpath(path, namespaces=NS):
        element.getparent().remove(element)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def test_a_missing_buyer_name_fails_the_facturx_schematron():
    broken = _without(build_cii(samples.sale()), AGREEMENT + "ram:BuyerTradeParty/ram:Name")
    with pytest.raises(FacturXInvalid, match=r"BR-07\]-An Invoice shall contain the Buyer name"):
        check_xml(broken, br_fr=False)


def test_a_misplaced_element_fails_the_xsd():
    root = etree.fromstring(build_cii(samples.sale()))
    document = root.find("rsm:ExchangedDocument", NS)
    document.append(document.find("ram:ID", NS))  # BT-1 after the notes: out of schema order
    with pytest.raises(FacturXInvalid, match="XSD"):
        check_xml(etree.tostring(root))


def test_a_wrong_total_fails_the_en16931_schematron():
    root = etree.fromstring(build_cii(samples.sale()))
    root.xpath(HEADER + "ram:SpecifiedTradeSettlementHeaderMonetarySummation/ram:GrandTotalAmount",
               namespaces=NS)[0].text = "1441.00"
    with pytest.raises(FacturXInvalid, match="BR-CO-15"):
        check_xml(etree.tostring(root), br_fr=False)


def test_br_fr_rules_run_and_catch_what_they_guard():
    sale = build_cii(samples.sale())
    assert [f.rule for f in schematron_failures(_without(sale, "//ram:IncludedNote[ram:SubjectCode='PMT']"), "br-fr")] \
        == ["BR-FR-05_BT-22_PMT"]
    no_framework = _without(sale, "//ram:BusinessProcessSpecifiedDocumentContextParameter")
    assert "BR-FR-08_BT-23" in {f.rule for f in schematron_failures(no_framework, "br-fr")}
    wrong_address = samples.sale(buyer=dataclasses.replace(
        samples.INDUSTRIAL, electronic_address=ElectronicAddress("999999999", "0225")))
    assert [f.rule for f in schematron_failures(build_cii(wrong_address), "br-fr")] == ["BR-FR-21_BT-49"]
    self_billed_wrong_seller = samples.self_billed(seller=dataclasses.replace(
        samples.DISTRIBUTOR, electronic_address=ElectronicAddress("999999999", "0225")))
    assert [f.rule for f in schematron_failures(build_cii(self_billed_wrong_seller), "br-fr")] == ["BR-FR-22_BT-34"]
    assert "BR-FR-13_BT-34" in {f.rule for f in schematron_failures(
        _without(sale, AGREEMENT + "ram:SellerTradeParty/ram:URIUniversalCommunication"), "br-fr")}


def test_a_credit_note_must_name_its_invoice():
    with pytest.raises(ValueError, match="BT-25"):
        InvoiceSnapshot(**{**vars(samples.credit_note()), "preceding_invoice": None})
