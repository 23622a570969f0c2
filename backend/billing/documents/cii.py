"""The Factur-X BASIC XML (UN/CEFACT CII D16B, EN 16931) of an invoice snapshot: a pure function.

`build_cii(snapshot)` returns the bytes embedded as `factur-x.xml`. Elements follow the order of
the CII D16B schema the Factur-X BASIC XSD restricts; the comments name the EN 16931 business
terms (BT-n) and the French rules (BR-FR-n, the reform's "Flux 2" schematron) each one answers.
docs/invoices.md "Invoice documents" has the field-by-field table.
"""

from __future__ import annotations

import datetime as dt

from lxml import etree

from backend.billing import vat
from backend.billing.documents.snapshot import InvoiceSnapshot, Party, PaymentMethod, PostalAddress, ServicePlace
from backend.billing.documents.terms import payment_notes, payment_terms

RSM = "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
RAM = "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"
QDT = "urn:un:unece:uncefact:data:standard:QualifiedDataType:100"
UDT = "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100"
NSMAP = {"rsm": RSM, "qdt": QDT, "ram": RAM, "udt": UDT}

BASIC_GUIDELINE = "urn:cen.eu:en16931:2017#compliant#urn:factur-x.eu:1p0:basic"
SIREN_SCHEME = "0002"  # ISO 6523 ICD of the French SIREN (BT-30, BT-47)
SIRET_SCHEME = "0009"  # ISO 6523 ICD of the French SIRET (BT-29, BT-46)
SIREN_ENDPOINT_SCHEME = "0225"  # EAS code of a French e-invoicing directory address (BT-34, BT-49)

SELF_BILLING = ("ABL", "Autofacturation")
# The legal mentions of the operation (its category, the option for VAT on debits) and the seller's
# company mentions: one "regulatory information" note (UNTDID 4451 REG; TXD is the French rules'
# single-taxable-person note). The seller's additional legal information (BT-33) has no element in
# the BASIC schema, so the note carries it.
REGULATORY = "REG"
VAT_ON_DEBITS_DUE_DATE_CODE = "5"  # BT-8 (UNTDID 2475 in CII): VAT due at the invoice date, on debits
REVERSE_CHARGE_CODE = "VATEX-EU-AE"  # BT-121, the VATEX code of reverse charge

_PAYMENT_MEANS_CODES = {PaymentMethod.SEPA_DIRECT_DEBIT: "59", PaymentMethod.CREDIT_TRANSFER: "58"}


def billing_framework(snapshot: InvoiceSnapshot) -> str:
    """BT-23, the French billing framework ("cadre de facturation"): a service invoice (S...),
    `S2` when its money was received in full when it was issued (BT-113 = BT-112, nothing due,
    BR-FR-CO-09: `invoice_snapshot` decides it from the invoice's state at issue), else `S1`.
    Self-billed invoices use the same codes (the type code 389 / 261
    says they are self-billed); S9 ("bidirectional") is for a different scheme."""
    return "S2" if snapshot.due_cents == 0 and snapshot.paid_cents > 0 else "S1"


def processing_note(snapshot: InvoiceSnapshot) -> tuple[str, str]:
    """The `BAR` note (BR-FR-20): `B2B` between two French companies (the flow the operator
    transmits, which also switches on the SIREN / electronic address rules BR-FR-11, 21 and 22),
    `B2BINT` when either party is abroad (e-reporting)."""
    domestic = snapshot.seller.address.country_code == snapshot.buyer.address.country_code == "FR"
    return ("BAR", "B2B" if domestic else "B2BINT")


def notes(snapshot: InvoiceSnapshot) -> list[tuple[str, str]]:
    """(subject code, text) of the BG-1 notes: ABL on self-billed kinds, the three payment mentions
    the reform asks (BR-FR-05; "not applicable" on a credit note), the mentions of the operation
    with the seller's company mentions (BT-33), the processing indicator."""
    result = [SELF_BILLING] if snapshot.is_self_billed else []
    mentions = [f"{mention}." for mention in snapshot.legal_mentions]
    if snapshot.seller.company_mentions:
        mentions.append(f"{snapshot.seller.name} : {snapshot.seller.company_mentions}.")
    return [*result, *payment_notes(snapshot), (REGULATORY, " ".join(mentions)), processing_note(snapshot)]


def build_cii(snapshot: InvoiceSnapshot) -> bytes:
    """The CII XML of `snapshot` (UTF-8, with declaration); identical input gives identical bytes."""
    root = etree.Element(f"{{{RSM}}}CrossIndustryInvoice", nsmap=NSMAP)

    context = _sub(root, RSM, "ExchangedDocumentContext")
    _ram(_ram(context, "BusinessProcessSpecifiedDocumentContextParameter"), "ID", billing_framework(snapshot))
    _ram(_ram(context, "GuidelineSpecifiedDocumentContextParameter"), "ID", BASIC_GUIDELINE)

    document = _sub(root, RSM, "ExchangedDocument")
    _ram(document, "ID", snapshot.invoice_number)  # BT-1
    _ram(document, "TypeCode", snapshot.type_code)  # BT-3
    _date_time(_ram(document, "IssueDateTime"), snapshot.issue_date)  # BT-2
    for subject, text in notes(snapshot):
        note = _ram(document, "IncludedNote")
        _ram(note, "Content", text)  # BT-22
        _ram(note, "SubjectCode", subject)  # BT-21

    transaction = _sub(root, RSM, "SupplyChainTradeTransaction")
    rate = _rate(snapshot.vat_rate_bps)
    for index, line in enumerate(snapshot.lines, start=1):
        item = _ram(transaction, "IncludedSupplyChainTradeLineItem")
        _ram(_ram(item, "AssociatedDocumentLineDocument"), "LineID", str(index))  # BT-126
        _ram(_ram(item, "SpecifiedTradeProduct"), "Name", line.label)  # BT-153
        price = _ram(_ram(item, "SpecifiedLineTradeAgreement"), "NetPriceProductTradePrice")
        _ram(price, "ChargeAmount", _amount(line.unit_price_cents))  # BT-146
        quantity = _ram(_ram(item, "SpecifiedLineTradeDelivery"), "BilledQuantity", str(line.quantity))  # BT-129
        quantity.set("unitCode", "C62")  # BT-130: "one" (a service)
        settlement = _ram(item, "SpecifiedLineTradeSettlement")
        _vat_category(_ram(settlement, "ApplicableTradeTax"), rate, snapshot.vat_category)  # BT-151, BT-152
        if line.period_start and line.period_end:
            _period(_ram(settlement, "BillingSpecifiedPeriod"), line.period_start, line.period_end)  # BG-26
        summation = _ram(settlement, "SpecifiedTradeSettlementLineMonetarySummation")
        _ram(summation, "LineTotalAmount", _amount(line.total_cents))  # BT-131

    agreement = _ram(transaction, "ApplicableHeaderTradeAgreement")
    _party(_ram(agreement, "SellerTradeParty"), snapshot.seller)  # BG-4
    _party(_ram(agreement, "BuyerTradeParty"), snapshot.buyer)  # BG-7

    # BG-13: the store where the ad space is (the buyer's own address when none is known).
    place = snapshot.service_place or ServicePlace(snapshot.buyer.name, snapshot.buyer.address)
    ship_to = _ram(_ram(transaction, "ApplicableHeaderTradeDelivery"), "ShipToTradeParty")
    _ram(ship_to, "Name", place.name)  # BT-70
    _address(_ram(ship_to, "PostalTradeAddress"), place.address)  # BG-15

    settlement = _ram(transaction, "ApplicableHeaderTradeSettlement")
    means = snapshot.payment_means
    if means and means.method is PaymentMethod.SEPA_DIRECT_DEBIT and means.creditor_identifier:
        _ram(settlement, "CreditorReferenceID", means.creditor_identifier)  # BT-90
    _ram(settlement, "PaymentReference", snapshot.invoice_number)  # BT-83
    _ram(settlement, "InvoiceCurrencyCode", snapshot.currency)  # BT-5
    if means and (means.method is PaymentMethod.SEPA_DIRECT_DEBIT or means.creditor_iban):
        # A transfer to an account nobody knows names none (BR-CO-27: 58 needs the payee's IBAN).
        _payment_means(settlement, means.method, means.debtor_iban, means.creditor_iban)  # BG-16
    tax = _ram(settlement, "ApplicableTradeTax")  # BG-23
    _ram(tax, "CalculatedAmount", _amount(snapshot.vat_amount_cents))  # BT-117
    _ram(tax, "TypeCode", "VAT")
    if snapshot.reverse_charge:
        _ram(tax, "ExemptionReason", vat.REVERSE_CHARGE_MENTION)  # BT-120
    _ram(tax, "BasisAmount", _amount(snapshot.amount_excl_tax_cents))  # BT-116
    _ram(tax, "CategoryCode", snapshot.vat_category)  # BT-118
    if snapshot.reverse_charge:
        _ram(tax, "ExemptionReasonCode", REVERSE_CHARGE_CODE)  # BT-121
    if snapshot.seller.vat_on_debits:
        _ram(tax, "DueDateTypeCode", VAT_ON_DEBITS_DUE_DATE_CODE)  # BT-8 (French rules: the option on debits)
    _ram(tax, "RateApplicablePercent", rate)  # BT-119
    if snapshot.period_start and snapshot.period_end:
        _period(_ram(settlement, "BillingSpecifiedPeriod"), snapshot.period_start, snapshot.period_end)  # BG-14
    terms = _ram(settlement, "SpecifiedTradePaymentTerms")  # BT-20, BT-9, BT-89
    _ram(terms, "Description", payment_terms(snapshot))
    _date_time(_ram(terms, "DueDateDateTime"), snapshot.due_date)
    if means and means.method is PaymentMethod.SEPA_DIRECT_DEBIT and means.mandate_reference:
        _ram(terms, "DirectDebitMandateID", means.mandate_reference)
    totals = _ram(settlement, "SpecifiedTradeSettlementHeaderMonetarySummation")  # BG-22
    _ram(totals, "LineTotalAmount", _amount(sum(line.total_cents for line in snapshot.lines)))  # BT-106
    _ram(totals, "TaxBasisTotalAmount", _amount(snapshot.amount_excl_tax_cents))  # BT-109
    _ram(totals, "TaxTotalAmount", _amount(snapshot.vat_amount_cents)).set("currencyID", snapshot.currency)  # BT-110
    _ram(totals, "GrandTotalAmount", _amount(snapshot.amount_incl_tax_cents))  # BT-112
    if snapshot.paid_cents:
        _ram(totals, "TotalPrepaidAmount", _amount(snapshot.paid_cents))  # BT-113
    _ram(totals, "DuePayableAmount", _amount(snapshot.due_cents))  # BT-115
    if snapshot.preceding_invoice:
        preceding = _ram(settlement, "InvoiceReferencedDocument")  # BG-3
        _ram(preceding, "IssuerAssignedID", snapshot.preceding_invoice.number)  # BT-25
        issued = _ram(preceding, "FormattedIssueDateTime")  # BT-26
        _sub(issued, QDT, "DateTimeString", _yyyymmdd(snapshot.preceding_invoice.issue_date)).set("format", "102")

    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def _party(element: etree._Element, party: Party) -> None:
    if party.siret:
        _ram(element, "GlobalID", party.siret).set("schemeID", SIRET_SCHEME)  # BT-29 / BT-46
    _ram(element, "Name", party.name)  # BT-27 / BT-44
    if party.siren:
        legal = _ram(element, "SpecifiedLegalOrganization")
        _ram(legal, "ID", party.siren).set("schemeID", SIREN_SCHEME)  # BT-30 / BT-47
    _address(_ram(element, "PostalTradeAddress"), party.address)  # BG-5 / BG-8
    if party.electronic_address:
        uri = _ram(_ram(element, "URIUniversalCommunication"), "URIID", party.electronic_address.uri)  # BT-34 / BT-49
        uri.set("schemeID", party.electronic_address.scheme)
    if party.vat_number:
        registration = _ram(element, "SpecifiedTaxRegistration")
        _ram(registration, "ID", party.vat_number).set("schemeID", "VA")  # BT-31 / BT-48


def _address(element: etree._Element, address: PostalAddress) -> None:
    if address.postal_code:
        _ram(element, "PostcodeCode", address.postal_code)
    if address.street:
        _ram(element, "LineOne", address.street)
    if address.city:
        _ram(element, "CityName", address.city)
    _ram(element, "CountryID", address.country_code)  # BT-40 / BT-55 / BT-80


def _payment_means(settlement: etree._Element, method: PaymentMethod, debtor_iban: str | None,
                   creditor_iban: str | None) -> None:
    means = _ram(settlement, "SpecifiedTradeSettlementPaymentMeans")
    _ram(means, "TypeCode", _PAYMENT_MEANS_CODES[method])  # BT-81
    if method is PaymentMethod.SEPA_DIRECT_DEBIT and debtor_iban:
        _ram(_ram(means, "PayerPartyDebtorFinancialAccount"), "IBANID", debtor_iban)  # BT-91
    if method is PaymentMethod.CREDIT_TRANSFER and creditor_iban:
        _ram(_ram(means, "PayeePartyCreditorFinancialAccount"), "IBANID", creditor_iban)  # BT-84


def _vat_category(tax: etree._Element, rate: str, category: str) -> None:
    _ram(tax, "TypeCode", "VAT")
    _ram(tax, "CategoryCode", category)
    _ram(tax, "RateApplicablePercent", rate)


def _period(element: etree._Element, start: dt.date, end: dt.date) -> None:
    _date_time(_ram(element, "StartDateTime"), start)
    _date_time(_ram(element, "EndDateTime"), end)


def _date_time(element: etree._Element, day: dt.date) -> None:
    _sub(element, UDT, "DateTimeString", _yyyymmdd(day)).set("format", "102")


def _sub(parent: etree._Element, namespace: str, name: str, text: str | None = None) -> etree._Element:
    element = etree.SubElement(parent, f"{{{namespace}}}{name}")
    if text is not None:
        element.text = text
    return element


def _ram(parent: etree._Element, name: str, text: str | None = None) -> etree._Element:
    return _sub(parent, RAM, name, text)


def _amount(cents: int) -> str:
    """Cents as a decimal with two places and a point (BR-FR-DEC-01); amounts are never negative."""
    if cents < 0:
        raise ValueError(f"negative amount {cents}")
    return f"{cents // 100}.{cents % 100:02d}"


def _rate(rate_bps: int) -> str:
    return str(vat.vat_rate_percent(rate_bps))


def _yyyymmdd(day: dt.date) -> str:
    return day.strftime("%Y%m%d")
