"""Invoice snapshots of every kind, as the post-invoice hook would build them (no database)."""

from __future__ import annotations

import dataclasses
import datetime as dt

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

PLATFORM = Party(
    name="Vitrine SAS",
    address=PostalAddress("8 avenue de l'Opéra", "75001", "Paris", "FR"),
    siren="732829320",
    siret="73282932000074",
    vat_number="FR44732829320",
    electronic_address=ElectronicAddress("732829320_FACTURES", "0225"),
    iban="FR7630006000011234567890189",
    legal_form="SAS", share_capital_cents=5_000_000, registration="RCS Paris 732 829 320",
)
INDUSTRIAL = Party(
    name="Fromagerie des Alpes SAS",
    address=PostalAddress("12 rue des Lilas", "74000", "Annecy", "FR"),
    siren="552100554",
    siret="55210055400013",
    vat_number="FR03552100554",
    electronic_address=ElectronicAddress("552100554", "0225"),
    iban="FR1420041010050500013M02606",
)
DISTRIBUTOR = Party(
    name="Supermarché du Lac",
    address=PostalAddress("1 quai du Lac", "74000", "Annecy", "FR"),
    siren="443061841",
    siret="44306184100047",
    vat_number="FR62443061841",
    electronic_address=ElectronicAddress("443061841", "0225"),
    iban="FR7610107001011234567890129",
    legal_form="SARL", share_capital_cents=800_000, registration="RCS Annecy 443 061 841",
)
STORE = ServicePlace("Supermarché du Lac", PostalAddress("1 quai du Lac", "74000", "Annecy", "FR"))
ISSUED_AT = dt.datetime(2026, 11, 22, 9, 30, tzinfo=dt.UTC)
LINE = InvoiceLine(
    label="Emplacement Tête de gondole A, Supermarché du Lac, du 01/12/2026 au 14/12/2026",
    quantity=1, unit_price_cents=120_000, total_cents=120_000,
    period_start=dt.date(2026, 12, 1), period_end=dt.date(2026, 12, 14),
)


def sale(**changes) -> InvoiceSnapshot:
    """A collected `platform_sale` paid by SEPA direct debit (380, paid when issued)."""
    snapshot = InvoiceSnapshot(
        invoice_number="FAC-RES-2026-000123", kind="platform_sale", issued_at=ISSUED_AT,
        issue_date=dt.date(2026, 11, 22), due_date=dt.date(2026, 11, 22),
        seller=PLATFORM, buyer=INDUSTRIAL, lines=(LINE,), amount_excl_tax_cents=120_000, vat_rate_bps=2000,
        period_start=LINE.period_start, period_end=LINE.period_end, reservation_reference="RES-8F2C",
        service_place=STORE, payment_means=PaymentMeans(PaymentMethod.SEPA_DIRECT_DEBIT, debtor_iban=INDUSTRIAL.iban,
                                   mandate_reference="VIT-SEPA-552100554-0001",
                                   creditor_identifier="FR12ZZZ123456"),
        paid_cents=144_000,
    )
    return dataclasses.replace(snapshot, **changes)


def credit_note(**changes) -> InvoiceSnapshot:
    """A refund `platform_credit_note` (381) of part of the sale."""
    line = dataclasses.replace(LINE, unit_price_cents=30_000, total_cents=30_000)
    snapshot = sale(
        invoice_number="AV-RES-2026-000007", kind="platform_credit_note", lines=(line,),
        amount_excl_tax_cents=30_000, paid_cents=0, due_date=dt.date(2026, 11, 22),
        preceding_invoice=PrecedingInvoice("FAC-RES-2026-000123", dt.date(2026, 11, 22)),
        payment_means=PaymentMeans(PaymentMethod.CREDIT_TRANSFER, creditor_iban=INDUSTRIAL.iban),
    )
    return dataclasses.replace(snapshot, **changes)


def self_billed(**changes) -> InvoiceSnapshot:
    """A `supplier_self_billed` invoice (389): the store base, distributor to platform."""
    line = dataclasses.replace(LINE, unit_price_cents=100_000, total_cents=100_000)
    snapshot = InvoiceSnapshot(
        invoice_number="FAC-SUP-443061841-2026-000004", kind="supplier_self_billed", issued_at=ISSUED_AT,
        issue_date=dt.date(2026, 12, 18), due_date=dt.date(2027, 1, 17),
        seller=DISTRIBUTOR, buyer=PLATFORM, lines=(line,), amount_excl_tax_cents=100_000, vat_rate_bps=2000,
        period_start=LINE.period_start, period_end=LINE.period_end, reservation_reference="RES-8F2C",
        payment_means=PaymentMeans(PaymentMethod.CREDIT_TRANSFER, creditor_iban=DISTRIBUTOR.iban),
    )
    return dataclasses.replace(snapshot, **changes)


def self_billed_credit_note(**changes) -> InvoiceSnapshot:
    """A `supplier_credit_note` (261) crediting the self-billed invoice in full: nothing is
    transferred (no payment means), its amount is deducted from what the platform owes."""
    snapshot = self_billed(
        invoice_number="AV-SUP-443061841-2026-000001", kind="supplier_credit_note",
        issue_date=dt.date(2026, 12, 20), due_date=dt.date(2026, 12, 20),
        preceding_invoice=PrecedingInvoice("FAC-SUP-443061841-2026-000004", dt.date(2026, 12, 18)),
        payment_means=None,
    )
    return dataclasses.replace(snapshot, **changes)


EU_BUYER = Party(
    name="Crèmerie de Bruxelles SRL",
    address=PostalAddress("10 rue Neuve", "1000", "Bruxelles", "BE"),
    vat_number="BE0403019261",
    electronic_address=ElectronicAddress("0403019261", "0208"),
    iban="BE68539007547034",
)


def reverse_charged_sale(**changes) -> InvoiceSnapshot:
    """A `platform_sale` to a buyer of another member state with a valid VAT number: no French
    VAT (rate 0 frozen), category AE."""
    values = {"invoice_number": "FAC-RES-2026-000124", "buyer": EU_BUYER, "vat_rate_bps": 0, "paid_cents": 120_000,
              "payment_means": PaymentMeans(PaymentMethod.CREDIT_TRANSFER, creditor_iban=PLATFORM.iban)}
    return sale(**{**values, **changes})


ALL_KINDS = {"380": sale, "381": credit_note, "389": self_billed, "261": self_billed_credit_note}
