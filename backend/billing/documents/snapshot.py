"""The immutable picture of an issued invoice that its documents are built from.

The CII XML (`cii.py`) and the human-readable PDF (`render.py`) are pure functions of an
`InvoiceSnapshot`: nothing in them reads the database, the clock or the settings, so the same
invoice always gives the same bytes. `snapshot_of_invoice` (in `invoice_snapshot.py`) is the one
place that reads the invoice, the parties' billing profiles and the platform's legal identity.

Amounts are integer cents excluding tax, as stored on the invoice; VAT comes from
`backend.billing.vat` (the one function the list, the PDF, the XML and the operator use).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from enum import StrEnum

from backend.billing import vat
from backend.documents.formatting import group_thousands

# Invoice kind -> UNTDID 1001 document type code (BT-3), API.md "CII type codes". Which kinds are
# credit notes or self-billed, and which are transmitted, is the billing and e-invoicing areas'
# (`backend.billing.models`, `backend.einvoicing.flow_types`); here the type code says it.
TYPE_CODES: dict[str, str] = {
    "platform_sale": "380",
    "platform_credit_note": "381",
    "supplier_self_billed": "389",
    "supplier_credit_note": "261",
    # Legacy kinds (old reservations only) are ordinary invoices between their two parties.
    "store_deposit": "380",
    "store_balance": "380",
    "platform_commission": "380",
}
SELF_BILLED_TYPE_CODES = frozenset({"389", "261"})
# The category of the operation every invoice states (a mention the French reform adds): the
# platform sells, and distributors self-bill, ad space in stores, a service (BT-23 `S...`).
OPERATION_CATEGORY = "Prestation de services"
VAT_ON_DEBITS = "Option pour le paiement de la taxe d'après les débits"
CREDIT_NOTE_TYPE_CODES = frozenset({"381", "261"})


@dataclass(frozen=True)
class PostalAddress:
    street: str | None
    postal_code: str | None
    city: str | None
    country_code: str  # ISO 3166-1 alpha-2

    def one_line(self) -> str:
        town = " ".join(part for part in (self.postal_code, self.city) if part)
        parts = [part for part in (self.street, town) if part]
        if self.country_code != "FR":
            parts.append(self.country_code)
        return ", ".join(parts) or "Adresse non renseignée"


@dataclass(frozen=True)
class ElectronicAddress:
    """BT-34 / BT-49: where the party receives e-invoices, with its EAS scheme (0225: SIREN-based)."""

    uri: str
    scheme: str


@dataclass(frozen=True)
class Party:
    name: str
    address: PostalAddress
    siren: str | None = None  # BT-30 / BT-47, scheme 0002
    siret: str | None = None  # BT-29 / BT-46, scheme 0009
    vat_number: str | None = None  # BT-31 / BT-48
    electronic_address: ElectronicAddress | None = None
    iban: str | None = None
    vat_on_debits: bool = False  # the party opted to pay VAT on debits (as a seller, its invoices say so)
    # The company mentions of a company seller (Code de commerce, art. R123-237).
    legal_form: str | None = None
    share_capital_cents: int | None = None
    registration: str | None = None  # "RCS Paris 901 234 567"

    @property
    def company_mentions(self) -> str | None:
        """"SAS au capital de 50 000,00 EUR, RCS Paris 901 234 567" (what the party gave of it), None
        when it gave nothing: printed under the seller, and in the XML's regulatory note."""
        capital = None
        if self.share_capital_cents:
            euros, cents = divmod(self.share_capital_cents, 100)
            capital = f"au capital de {group_thousands(str(euros))},{cents:02d} EUR"
        form = " ".join(part for part in (self.legal_form, capital) if part)
        return ", ".join(part for part in (form, self.registration) if part) or None

    def identity_line(self) -> str:
        """Name, company mentions, SIRET and address on one line: the footer of the seller's documents."""
        parts = (self.name, self.company_mentions, self.siret and f"SIRET {self.siret}", self.address.one_line())
        return " · ".join(part for part in parts if part)


@dataclass(frozen=True)
class ServicePlace:
    """Where the service is performed (the store of the ad space): the deliver-to party (BG-13)."""

    name: str
    address: PostalAddress


@dataclass(frozen=True)
class InvoiceLine:
    label: str  # BT-153
    quantity: int  # BT-129
    unit_price_cents: int  # BT-146
    total_cents: int  # BT-131
    period_start: dt.date | None = None  # BT-134
    period_end: dt.date | None = None  # BT-135


class PaymentMethod(StrEnum):
    SEPA_DIRECT_DEBIT = "sepa_dd"  # UNTDID 4461 code 59
    CREDIT_TRANSFER = "bank_transfer"  # code 58 (SEPA credit transfer)


@dataclass(frozen=True)
class PaymentMeans:
    method: PaymentMethod
    creditor_iban: str | None = None  # BT-84, the account paid into (credit transfer)
    debtor_iban: str | None = None  # BT-91, the account debited (direct debit)
    mandate_reference: str | None = None  # BT-89
    creditor_identifier: str | None = None  # BT-90 (SEPA ICS)


@dataclass(frozen=True)
class PrecedingInvoice:
    """BT-25 / BT-26: the invoice a credit note corrects."""

    number: str
    issue_date: dt.date


@dataclass(frozen=True)
class InvoiceSnapshot:
    invoice_number: str
    kind: str
    issued_at: dt.datetime  # timezone-aware; the PDF's dates derive from it
    issue_date: dt.date  # Europe/Paris date of issuedAt (BT-2)
    due_date: dt.date  # BT-9
    seller: Party
    buyer: Party
    lines: tuple[InvoiceLine, ...]
    amount_excl_tax_cents: int
    vat_rate_bps: int
    period_start: dt.date | None = None  # BT-73
    period_end: dt.date | None = None  # BT-74
    reservation_reference: str | None = None
    service_place: ServicePlace | None = None
    preceding_invoice: PrecedingInvoice | None = None
    payment_means: PaymentMeans | None = None
    paid_cents: int = 0  # BT-113: already paid when the invoice was issued
    currency: str = "EUR"
    # Credit notes: what the credited invoice's earlier credit notes credit (its VAT is the
    # cumulative difference, backend/billing/vat.py).
    credited_before_cents: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in TYPE_CODES:
            raise ValueError(f"no document type code for invoice kind {self.kind!r}")
        if not self.lines or sum(line.total_cents for line in self.lines) != self.amount_excl_tax_cents:
            raise ValueError("the lines must add up to the amount excluding tax")
        if min(self.amount_excl_tax_cents, self.paid_cents) < 0 or self.paid_cents > self.amount_incl_tax_cents:
            raise ValueError("amounts must be positive and the paid amount at most the total")
        if self.is_credit_note and self.preceding_invoice is None:
            raise ValueError("a credit note names the invoice it corrects (BT-25)")
        if self.issued_at.tzinfo is None:
            raise ValueError("issued_at must be timezone-aware")

    @property
    def type_code(self) -> str:
        return TYPE_CODES[self.kind]

    @property
    def is_self_billed(self) -> bool:
        return self.type_code in SELF_BILLED_TYPE_CODES

    @property
    def is_credit_note(self) -> bool:
        return self.type_code in CREDIT_NOTE_TYPE_CODES

    @property
    def vat_amount_cents(self) -> int:
        return vat.vat_amount_cents(self.amount_excl_tax_cents, self.vat_rate_bps,
                                    credited_before_cents=self.credited_before_cents)

    @property
    def amount_incl_tax_cents(self) -> int:
        return vat.amount_incl_tax_cents(self.amount_excl_tax_cents, self.vat_rate_bps,
                                         credited_before_cents=self.credited_before_cents)

    @property
    def due_cents(self) -> int:
        return self.amount_incl_tax_cents - self.paid_cents

    @property
    def reverse_charge(self) -> bool:
        """Sold without VAT to a buyer of another member state with a valid VAT number: the buyer
        pays the VAT (category AE, `backend.billing.vat.reverse_charged_issue`)."""
        return vat.reverse_charged_issue(
            self.vat_rate_bps, seller_country=self.seller.address.country_code,
            buyer_country=self.buyer.address.country_code, buyer_vat_number=self.buyer.vat_number)

    @property
    def vat_category(self) -> str:
        """BT-118 / BT-151: `AE` (reverse charge) or `S` (standard rate)."""
        return "AE" if self.reverse_charge else "S"

    @property
    def legal_mentions(self) -> tuple[str, ...]:
        """The mentions of the operation every document states: its category, "Autoliquidation"
        when reverse charged and, when the seller opted for it, the payment of VAT on debits."""
        return (OPERATION_CATEGORY, *((vat.REVERSE_CHARGE_MENTION,) if self.reverse_charge else ()),
                *((VAT_ON_DEBITS,) if self.seller.vat_on_debits else ()))

    @property
    def delivery_place(self) -> ServicePlace | None:
        """The place of the service when it is not the buyer's address: the documents print it
        then (the XML always carries it, BG-13)."""
        place = self.service_place
        return place if place is not None and place.address != self.buyer.address else None

    @property
    def document_label(self) -> str:
        if self.is_credit_note:
            return "Avoir d'autofacturation" if self.is_self_billed else "Avoir"
        return "Facture d'autofacturation" if self.is_self_billed else "Facture"
