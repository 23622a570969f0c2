"""Reverse charge end to end: a sale to a buyer established in another member state with a valid
VAT number of that state is issued without VAT (category AE, "Autoliquidation", the buyer's VAT
number), debited without VAT, refunded and credited without VAT, booked on 7062 without 44571, and
gives no 212; a buyer without such a number is charged French VAT."""

from __future__ import annotations

import io
from dataclasses import replace
from datetime import date

import pytest
from lxml import etree

from backend.billing import corrections
from backend.billing.accounting import fec, verify
from backend.billing.accounting.entries import paris_day
from backend.billing.accounting.vat_return import vat_return
from backend.billing.bank import settlement as bank_settlement
from backend.billing.collection import collect
from backend.billing.documents.invoice_snapshot import snapshot_of_invoice
from backend.billing.documents.render import render_invoice_pdf
from backend.billing.models import Invoice, PaymentMethod, PaymentOrder
from backend.billing.self_billing import invoice as self_billing
from backend.einvoicing import payment_reports
from backend.einvoicing.drafts import create_transmission_draft
from backend.einvoicing.models import PaymentReport
from backend.einvoicing.status import FlowType
from backend.identity import bank_details
from tests.billing.accounting.books import book_lines
from tests.billing.bank.statements_data import booked
from tests.billing.documents.facturx_check import check_pdf
from tests.billing.helpers import Market, approved_org, booted_config
from tests.documents.conftest import pdf_pages
from tests.factories import add_billing_profile, make_organization

NS = {"rsm": "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100",
      "ram": "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"}
TAX = "rsm:SupplyChainTradeTransaction/ram:ApplicableHeaderTradeSettlement/ram:ApplicableTradeTax/"
BELGIAN_VAT = "BE0403019261"


def platform_config():
    """The platform's legal identity as a deployment sets it (frozen on its invoices at issue)."""
    return replace(booted_config(), platform_legal_company_name="Vitrine SAS", platform_legal_siret="73282932000074",
                   platform_legal_vat_number="FR44732829320", platform_legal_street="8 avenue de l'Opéra",
                   platform_legal_postal_code="75001", platform_legal_city="Paris", platform_legal_country="FR",
                   platform_legal_iban="FR7630006000011234567890189", odp_seller_ap="732829320_FACTURES",
                   odp_seller_ap_scheme="0225")


def industrial_in(country: str, vat_number: str | None):
    """A KYB-approved industrial whose billing address is in `country`, with `vat_number`."""
    organization = make_organization("industrial", kyb_status="approved")
    add_billing_profile(organization, country=country, vat_number=vat_number, street="10 rue Neuve",
                        postal_code="1000", city="Bruxelles", iban="BE68539007547034")
    bank_details.record_approved(organization.id)
    return organization


def collected_sale(industrial, *, key: str = "k") -> Invoice:
    reservation = Market().reservation(industrial, approved_org("distributor"), price_cents=100_000)
    answer = collect.collect(reservation_id=reservation.id, industrial_organization_id=industrial.id,
                             method=PaymentMethod.BANK_TRANSFER, key=key, user_id=None, config=platform_config())
    return Invoice.get(Invoice.number == answer.invoice_number)


def rendered(invoice: Invoice, storage) -> tuple[etree._Element, str]:
    """The invoice's PDF, rendered twice to the same bytes; its XML (the four checks passed) and text."""
    snapshot = snapshot_of_invoice(invoice, platform_config())
    first = render_invoice_pdf(snapshot, storage=storage)
    assert render_invoice_pdf(snapshot_of_invoice(Invoice.get_by_id(invoice.id), platform_config()),
                              storage=storage).content == first.content
    return etree.fromstring(check_pdf(first.content)), " ".join(pdf_pages(first.content))


@pytest.fixture
def eu_sale():
    industrial = industrial_in("BE", BELGIAN_VAT)
    return collected_sale(industrial), industrial


def test_a_sale_to_a_buyer_of_another_member_state_is_reverse_charged(eu_sale, storage, seeded):
    invoice, _ = eu_sale
    assert (invoice.vat_rate_bps, invoice.amount_excl_tax_cents) == (0, 120_000)
    [order] = PaymentOrder.select().where(PaymentOrder.invoice == invoice.id)
    assert order.amount_cents == 120_000  # debited the total without VAT
    xml, text = rendered(invoice, storage)
    assert xml.xpath(TAX + "ram:CategoryCode/text()", namespaces=NS) == ["AE"]
    assert xml.xpath(TAX + "ram:CalculatedAmount/text()", namespaces=NS) == ["0.00"]
    assert xml.xpath(TAX + "ram:ExemptionReason/text()", namespaces=NS) == ["Autoliquidation"]
    assert xml.xpath(TAX + "ram:ExemptionReasonCode/text()", namespaces=NS) == ["VATEX-EU-AE"]
    assert xml.xpath("//ram:BuyerTradeParty/ram:SpecifiedTaxRegistration/ram:ID/text()",
                     namespaces=NS) == [BELGIAN_VAT]
    assert xml.xpath("//ram:GrandTotalAmount/text()", namespaces=NS) == ["1200.00"]
    for mention in ("Autoliquidation", f"N° TVA intracommunautaire {BELGIAN_VAT}", "TVA 0 %",
                    "Total TTC 1 200,00 €"):
        assert mention in text, mention
    # the e-invoicing flow of a buyer of another member state: international B2B (e-reporting)
    transmission, _ = create_transmission_draft(
        invoice_number=invoice.number, document_kind="invoice", flow_type=FlowType.FR_DOMESTIC_B2B,
        document_pdf_key=None, amount_incl_tax_cents=120_000, invoice_kind=invoice.kind)
    assert (transmission.flow_type, transmission.processing_rule) == (FlowType.EU_INTRA_B2B, "B2BInt")


def test_its_books_use_7062_and_no_vat(eu_sale):
    invoice, _ = eu_sale
    lines = [(line["account"], line["debit_cents"], line["credit_cents"])
             for line in book_lines(invoice_id=invoice.id, event="sale_invoice")]
    assert lines == [("411", 120_000, 0), ("7062", 0, 120_000)]
    assert [breach for breach in verify.verify() if invoice.number in breach] == []
    # the FEC names the account with its label, and the sale has no VAT line there either
    out = io.BytesIO()
    fec.write_fec(paris_day(invoice.issued_at).year, out)
    records = [dict(zip(fec.FIELDS, record.split("\t"), strict=True))
               for record in out.getvalue().decode("iso8859_15").split("\n")[1:-1]]
    accounts = {(r["CompteNum"], r["CompteLib"]) for r in records if r["PieceRef"] == invoice.number}
    assert accounts == {("411", "Clients"), ("7062", "Prestations de services - UE autoliquidation")}
    # the VAT of its month: its base under the rate 0, with no tax
    zero = {line.rate_bps: line for line in vat_return(f"{paris_day(invoice.issued_at):%Y-%m}").collected}[0]
    assert zero.vat_cents == 0 and zero.base_cents >= 120_000


def test_its_refund_and_credit_note_carry_no_vat(eu_sale, storage, seeded):
    invoice, _ = eu_sale
    refunded = corrections.refund_once(key="r-1", invoice_number=invoice.number, amount_cents=30_001,
                                       reason="Vitrine abîmée", method=PaymentMethod.BANK_TRANSFER, user_id=None,
                                       config=platform_config())
    assert refunded.amount_incl_tax_cents == 30_001
    note = Invoice.get(Invoice.number == refunded.credit_note_number)
    assert (note.vat_rate_bps, note.customer["vatNumber"]) == (0, BELGIAN_VAT)
    assert PaymentOrder.get_by_id(refunded.payment_order_id).amount_cents == 30_001
    xml, text = rendered(note, storage)
    assert xml.xpath(TAX + "ram:CategoryCode/text()", namespaces=NS) == ["AE"]
    assert "Autoliquidation" in text
    lines = [(line["account"], line["debit_cents"], line["credit_cents"])
             for line in book_lines(invoice_id=note.id, event="customer_credit_note")]
    assert lines == [("7062", 30_001, 0), ("411", 0, 30_001)]


def test_its_settled_payment_gives_no_212(eu_sale):
    invoice, _ = eu_sale
    [order] = PaymentOrder.select().where(PaymentOrder.invoice == invoice.id)
    bank_settlement.settle(order.id, booked_on=date(2026, 12, 3))
    payment_reports.sweep()
    assert not PaymentReport.select().where(PaymentReport.invoice_number == invoice.number).exists()


@pytest.mark.parametrize(("country", "vat_number"), [
    ("BE", None),  # no VAT number: not a taxable person the platform can name
    ("BE", "BE0403019262"),  # a wrong check digit
    ("BE", "NL004495445B01"),  # a number of another member state than the buyer's
    ("BE", "FR40303265045"),  # a French number: the buyer is not identified in its own state
    ("FR", "FR40303265045"),  # a French buyer: a domestic sale
    ("CH", "CHE116281710"),  # not a member state: outside reverse charge within the EU
])
def test_a_buyer_without_a_valid_vat_number_of_another_member_state_pays_french_vat(country, vat_number):
    invoice = collected_sale(industrial_in(country, vat_number))
    assert invoice.vat_rate_bps == 2000
    [order] = PaymentOrder.select().where(PaymentOrder.invoice == invoice.id)
    assert order.amount_cents == 144_000
    accounts = {line["account"] for line in book_lines(invoice_id=invoice.id, event="sale_invoice")}
    # French VAT, pending until the customer pays (CGI art. 269-2-c): `44574` at issue
    assert accounts == {"411", "706", "44574"}


def test_a_french_buyer_pays_french_vat():
    invoice = collected_sale(approved_org("industrial"))
    assert invoice.vat_rate_bps == 2000


def test_the_store_share_of_a_reverse_charged_sale_is_self_billed_with_french_vat(eu_sale):
    sale, _ = eu_sale
    booked(*PaymentOrder.select().where(PaymentOrder.invoice == sale.id))
    answer = self_billing.catch_up(reservation_id=sale.reservation_id, user_id=None, force=True,
                                   reason="Mandat signé sur papier", config=platform_config())
    self_billed = Invoice.get(Invoice.reservation_id == sale.reservation_id, Invoice.kind == "supplier_self_billed")
    assert (answer.idempotent, self_billed.vat_rate_bps) == (False, 2000)
