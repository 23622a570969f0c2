"""Which flow an invoice takes, from its buyer's country (Specification C, "EinvoiceFlowType").

Only a French issuer is supported. A French buyer makes a domestic B2B flow (structured
transmission mandatory, XP Z12-013 processing rule `B2B`); a buyer in another EU member state an
intra-EU flow, and any other buyer an export flow: both of those are e-reporting, sent to the
operator as the same Factur-X with the processing rule `B2BInt`.

The buyer is the one frozen on the invoice when it was issued (`frozen_buyer`, read from billing's
invoice row), never the live billing profile: a profile changed after issue never changes where an
issued invoice goes.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.db import database
from backend.einvoicing.status import DocumentKind, FlowType

# The 27 member states (ISO 3166-1 alpha-2; Greece is GR, the EU's own code EL is accepted too).
EU_MEMBER_STATES = frozenset({
    "AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GR", "HR", "HU", "IE", "IT",
    "LT", "LU", "LV", "MT", "NL", "PL", "PT", "RO", "SE", "SI", "SK",
})
_ALIASES = {"EL": "GR"}
ISSUER_COUNTRY = "FR"

# Invoice kinds that are transmitted, and the document each one is (spec C, post-invoice hook).
# Legacy kinds (`store_deposit`, `store_balance`, `platform_commission`) have no transmission.
DOCUMENT_KIND_OF_INVOICE = {
    "platform_sale": DocumentKind.INVOICE,
    "supplier_self_billed": DocumentKind.INVOICE,
    "platform_credit_note": DocumentKind.CREDIT_NOTE,
    "supplier_credit_note": DocumentKind.CREDIT_NOTE,
}
SELF_BILLED_KINDS = frozenset({"supplier_self_billed", "supplier_credit_note"})


class UnsupportedIssuer(ValueError):
    """An issuer outside France: the platform transmits only French invoices."""


def normalize_country(code: str | None) -> str | None:
    """`fr` -> `FR`; blank -> None."""
    if code is None or not code.strip():
        return None
    value = code.strip().upper()
    return _ALIASES.get(value, value)


def resolve_buyer_country(*candidates: str | None, default: str) -> str:
    """The first country given, in the order of spec C (billing-address country, then the
    organization's legal-address country), else `default` (`PLATFORM_COUNTRY_CODE`)."""
    for candidate in candidates:
        if (country := normalize_country(candidate)) is not None:
            return country
    return normalize_country(default) or ISSUER_COUNTRY


def flow_type_for(buyer_country: str, *, issuer_country: str = ISSUER_COUNTRY) -> FlowType:
    """FR -> `fr_domestic_b2b`, another EU member -> `eu_intra_b2b`, else `export_b2b`."""
    if normalize_country(issuer_country) != ISSUER_COUNTRY:
        raise UnsupportedIssuer(f"only a French issuer is supported, got {issuer_country!r}")
    country = normalize_country(buyer_country)
    if country is None or len(country) != 2 or not country.isalpha():
        raise ValueError(f"a buyer country is an ISO 3166-1 alpha-2 code, got {buyer_country!r}")
    if country == ISSUER_COUNTRY:
        return FlowType.FR_DOMESTIC_B2B
    if country in EU_MEMBER_STATES:
        return FlowType.EU_INTRA_B2B
    return FlowType.EXPORT_B2B


def processing_rule_for(flow_type: FlowType | str) -> str:
    """XP Z12-013 `processingRule`: `B2B` for a domestic flow, `B2BInt` for international B2B."""
    return "B2B" if FlowType(flow_type) is FlowType.FR_DOMESTIC_B2B else "B2BInt"


@dataclass(frozen=True)
class FrozenBuyer:
    """The buyer as the issued invoice names it."""

    country: str
    siren: str | None


INVOICE_TABLE = "billing_invoice"  # billing's table: its `customer` is the party frozen at issue


def frozen_buyer(invoice_number: str) -> FrozenBuyer | None:
    """The buyer frozen on the invoice `invoice_number` (its country, and its SIREN when it has a
    valid one), or None when billing has no such invoice or it names no country."""
    row = database.execute_sql(
        f"SELECT customer->>'country', customer->>'siren' FROM {INVOICE_TABLE} WHERE number = %s",  # noqa: S608
        (invoice_number,)).fetchone()
    if row is None or normalize_country(row[0]) is None:
        return None
    country, siren = row
    siren = siren.strip() if isinstance(siren, str) else None
    return FrozenBuyer(country=normalize_country(country), siren=siren if siren and len(siren) == 9
                       and siren.isdigit() else None)


def document_kind_for(invoice_kind: str) -> DocumentKind | None:
    """`invoice` or `credit_note` for a transmitted invoice kind; None for a legacy kind."""
    return DOCUMENT_KIND_OF_INVOICE.get(invoice_kind)


def addressee_siren(invoice_number: str, invoice_kind: str | None, buyer_siren: str | None) -> str | None:
    """The SIREN of the party an invoice is deposited for, whose platform the directory must
    know: the buyer of a sale; the distributor (the seller, who receives it) of a self-billed
    invoice or credit note, issued by the platform in its name."""
    if invoice_kind not in SELF_BILLED_KINDS:
        return buyer_siren
    row = database.execute_sql(
        f"SELECT issuer->>'siren' FROM {INVOICE_TABLE} WHERE number = %s", (invoice_number,)).fetchone()  # noqa: S608
    siren = row[0].strip() if row and isinstance(row[0], str) else None
    return siren if siren and len(siren) == 9 and siren.isdigit() else None
