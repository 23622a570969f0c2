"""The snapshot of an issued invoice: the one place the invoice documents read the database.

Parties come from the invoice row itself (its `issuer` / `customer` snapshots, frozen when it was
issued from the billing profiles and the `PLATFORM_LEGAL_*` identity); the placeholders written
for a value missing then (`non renseigné`) stay readable on the PDF and are left out of the XML.
What the invoice row does not hold is read from rows that never change once written: the SEPA
mandate of the payment order (debited IBAN), the credited invoice (BT-25/26), the reservation's
store (the place of service). Electronic addresses and the SEPA creditor identifier come from
the settings: the platform's access point `ODP_SELLER_AP` (scheme `ODP_SELLER_AP_SCHEME`), every
organization's SIREN with scheme 0225 (the French directory), `PLATFORM_SEPA_CREDITOR_ID`.
The platform's option for VAT on debits is the one frozen in its party snapshot
(`PLATFORM_VAT_ON_DEBITS` when the invoice was issued).
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from stdnum.fr import siren as siren_number

from backend.billing.documents.snapshot import (
    ElectronicAddress,
    InvoiceLine,
    InvoiceSnapshot,
    Party,
    PaymentMeans,
    PaymentMethod,
    PostalAddress,
    PrecedingInvoice,
    ServicePlace,
)
from backend.billing.models import Invoice, PaymentOrder, SepaMandate
from backend.config import Config
from backend.marketplace.models import AdSpace, Reservation, Store

PARIS = ZoneInfo("Europe/Paris")
NOT_PROVIDED = "non renseigné"  # backend.billing.invoicing.parties writes it for a value missing at issue
SIREN_ENDPOINT_SCHEME = "0225"


def snapshot_of_invoice(invoice: Invoice, config: Config) -> InvoiceSnapshot:
    issuer = _party(invoice.issuer, platform=invoice.issuer_organization_id is None, config=config)
    customer = _party(invoice.customer, platform=invoice.customer_organization_id is None, config=config)
    lines = tuple(
        InvoiceLine(label=line["label"], quantity=int(line.get("quantity") or 1),
                    unit_price_cents=int(line.get("unitPriceCents", line["totalCents"])),
                    total_cents=int(line["totalCents"]),
                    period_start=_paris_date(invoice.service_starts_at),
                    period_end=_paris_date(invoice.service_ends_at))
        for line in invoice.lines
    )
    kind = str(invoice.kind)
    # What an invoice says is fixed at issue, whenever its PDF is rendered. Nothing the platform
    # issues is paid when issued: a collection records its order `paid` with the invoice, but the
    # money is the bank's to show later (a debit not yet presented, a transfer not yet on a
    # statement), and a payout comes later still; so no prepaid amount (BT-113), BT-23 `S1`, and
    # the invoice says what is due, never "réglée".
    return InvoiceSnapshot(
        invoice_number=invoice.number, kind=kind, issued_at=invoice.issued_at,
        issue_date=_paris_date(invoice.issued_at), due_date=_paris_date(invoice.due_at),
        seller=issuer, buyer=customer, lines=lines, amount_excl_tax_cents=invoice.amount_excl_tax_cents,
        vat_rate_bps=invoice.vat_rate_bps, currency=invoice.currency,
        period_start=_paris_date(invoice.service_starts_at), period_end=_paris_date(invoice.service_ends_at),
        reservation_reference=invoice.reservation_id, service_place=_service_place(invoice.reservation_id),
        preceding_invoice=_preceding(invoice), payment_means=_payment_means(invoice, issuer, customer, config),
        paid_cents=0, credited_before_cents=invoice.credited_before_cents,
    )


def _value(data: dict, key: str) -> str | None:
    value = data.get(key)
    return None if value in (None, "", NOT_PROVIDED) else str(value)


def _party(data: dict, *, platform: bool, config: Config) -> Party:
    siren = _value(data, "siren") or (_value(data, "siret") or "")[:9] or None
    vat_number = _value(data, "vatNumber")
    if vat_number is None and siren and siren_number.is_valid(siren):
        vat_number = "FR" + siren_number.to_tva(siren)  # FR + key + SIREN: the French VAT number
    if platform and config.odp_seller_ap:
        endpoint = ElectronicAddress(config.odp_seller_ap, config.odp_seller_ap_scheme)
    else:
        endpoint = ElectronicAddress(siren, SIREN_ENDPOINT_SCHEME) if siren else None
    return Party(
        name=str(data.get("legalName") or "Raison sociale non renseignée"),
        address=PostalAddress(_value(data, "street"), _value(data, "postalCode"), _value(data, "city"),
                              (_value(data, "country") or "FR").upper()),
        siren=siren, siret=_value(data, "siret"), vat_number=vat_number, electronic_address=endpoint,
        iban=_value(data, "iban"), vat_on_debits=bool(data.get("vatOnDebits")),
        legal_form=_value(data, "legalForm"), share_capital_cents=data.get("shareCapitalCents") or None,
        registration=_value(data, "registration"),
    )


def _payment_means(invoice: Invoice, issuer: Party, customer: Party, config: Config) -> PaymentMeans | None:
    """How the document's money moves. A credit note: the customer's account, frozen with it,
    when a refund pays it back by transfer (BT-84 is the payee's account, the customer's), none when
    it is a credit to deduct. An invoice: the debited account of a direct debit, else the issuer's
    account a transfer pays into."""
    order = (PaymentOrder.select().where(PaymentOrder.invoice == invoice.id)
             .order_by(PaymentOrder.created_at, PaymentOrder.id).first())
    if invoice.credited_invoice_id is not None:
        if order is None:
            return None  # its amount is to deduct, nothing is transferred
        return PaymentMeans(PaymentMethod.CREDIT_TRANSFER, creditor_iban=customer.iban)
    if order is not None and str(order.method) == PaymentMethod.SEPA_DIRECT_DEBIT and order.mandate_ref:
        mandate = SepaMandate.select(SepaMandate.iban).where(SepaMandate.mandate_ref == order.mandate_ref).first()
        return PaymentMeans(PaymentMethod.SEPA_DIRECT_DEBIT, debtor_iban=mandate.iban if mandate else None,
                            mandate_reference=order.mandate_ref,
                            creditor_identifier=config.platform_sepa_creditor_id)
    if issuer.iban:
        return PaymentMeans(PaymentMethod.CREDIT_TRANSFER, creditor_iban=issuer.iban)
    return None


def _preceding(invoice: Invoice) -> PrecedingInvoice | None:
    if invoice.credited_invoice_id is None:
        return None
    credited = Invoice.select(Invoice.number, Invoice.issued_at).where(Invoice.id == invoice.credited_invoice_id).get()
    return PrecedingInvoice(credited.number, _paris_date(credited.issued_at))


def _service_place(reservation_id: str | None) -> ServicePlace | None:
    if reservation_id is None:
        return None
    store = (Store.select(Store).join(AdSpace).join(Reservation, on=Reservation.ad_space == AdSpace.id)
             .where(Reservation.id == reservation_id).first())
    if store is None:
        return None
    return ServicePlace(store.name, PostalAddress(store.street, store.postal_code, store.city, store.country.upper()))


def _paris_date(moment: dt.datetime | None) -> dt.date | None:
    return moment.astimezone(PARIS).date() if moment is not None else None
