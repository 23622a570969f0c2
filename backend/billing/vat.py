"""VAT of an invoice: the one function the invoice list, the PDF, the CII XML and the operator use.

The rate is frozen on the invoice when it is issued (`PLATFORM_VAT_RATE_PERCENT` then), stored in
basis points (20 % = 2000), and the VAT amount is computed at read time from the stored amount
excluding tax (spec C: `taxAmountCents` stays 0 in storage).

A credit note takes the rate frozen on the invoice it credits, and its VAT is the difference of the
cumulative VAT (API.md "Money that always balances"): `vat(credited before + this one) -
vat(credited before)`, `credited before` being what the invoice's earlier credit notes credit
(frozen on the credit note when it is issued). So the credit notes of an invoice never return
more VAT than it carried, and crediting all of it returns exactly what was paid.
"""

from __future__ import annotations

from decimal import Decimal

from backend.identity.french_ids import EU_MEMBER_STATES, is_vat_number_of
from backend.money import apply_bps

# Reverse charge (CGI art. 259-1° and 283-2): a service to a taxable person established in another
# member state is taxed there, by the buyer; the invoice carries no French VAT, the buyer's VAT
# number, category AE and "Autoliquidation" (art. 242 nonies A, I-13°). The number is checked with
# its member state's check digits (python-stdnum), not against VIES.
REVERSE_CHARGE_MENTION = "Autoliquidation"


def vat_rate_bps(percent: int | str | Decimal) -> int:
    """A percentage (`20`, `"5.5"`) in basis points (2000, 550); at most two decimals."""
    bps = Decimal(str(percent)) * 100
    if bps != bps.to_integral_value() or not 0 <= bps <= 10_000:
        raise ValueError(f"VAT rate {percent!r} is not a percentage with at most two decimals")
    return int(bps)


def vat_rate_percent(rate_bps: int) -> Decimal:
    """The rate as a percentage with two decimals (`Decimal("20.00")`), as the API and XML show it."""
    return (Decimal(rate_bps) / 100).quantize(Decimal("0.01"))


def vat_amount_cents(amount_excl_tax_cents: int, rate_bps: int, *, credited_before_cents: int | None = None) -> int:
    """The VAT of an invoice; of a credit note when `credited_before_cents` (what the credited
    invoice's earlier credit notes credit) is given: the cumulative difference."""
    if credited_before_cents is None:
        return apply_bps(amount_excl_tax_cents, rate_bps)
    return (apply_bps(credited_before_cents + amount_excl_tax_cents, rate_bps)
            - apply_bps(credited_before_cents, rate_bps))


def amount_incl_tax_cents(amount_excl_tax_cents: int, rate_bps: int, *,
                          credited_before_cents: int | None = None) -> int:
    return amount_excl_tax_cents + vat_amount_cents(amount_excl_tax_cents, rate_bps,
                                                    credited_before_cents=credited_before_cents)


def reverse_charged(*, seller_country: str, buyer_country: str, buyer_vat_number: str | None) -> bool:
    """Whether a service sold to this buyer is reverse charged: a buyer established in another
    member state than the seller's, with a VAT number of that state whose check digits hold. A
    buyer without one is charged the seller's VAT."""
    buyer_country, seller_country = buyer_country.upper(), seller_country.upper()
    if buyer_country == seller_country or buyer_country not in EU_MEMBER_STATES or not buyer_vat_number:
        return False
    return is_vat_number_of(buyer_vat_number, buyer_country)


def _countries_and_number(seller: dict, buyer: dict) -> dict:
    """`reverse_charged`'s arguments from two invoice party snapshots
    (`backend.billing.invoicing.parties`)."""
    return {"seller_country": seller.get("country") or "FR", "buyer_country": buyer.get("country") or "FR",
            "buyer_vat_number": buyer.get("vatNumber")}


def rate_bps_between(seller: dict, buyer: dict, *, rate_bps: int) -> int:
    """The VAT rate a sale between these parties (snapshots) is issued at: none when it is
    reverse charged, else `rate_bps`. What the customer is debited is the invoice's total at this
    rate."""
    return 0 if reverse_charged(**_countries_and_number(seller, buyer)) else rate_bps


def reverse_charged_issue(rate_bps: int, *, seller_country: str, buyer_country: str,
                          buyer_vat_number: str | None) -> bool:
    """Whether an issued invoice (its frozen rate and parties) was reverse charged: issued without
    VAT to a buyer it reverse charges. Its documents carry category AE, its books the sub-account
    of such sales, and no payment data is reported for it."""
    return rate_bps == 0 and reverse_charged(seller_country=seller_country, buyer_country=buyer_country,
                                             buyer_vat_number=buyer_vat_number)


def reverse_charged_invoice(*, rate_bps: int, seller: dict, buyer: dict) -> bool:
    """`reverse_charged_issue` of an invoice row's frozen rate and party snapshots."""
    return reverse_charged_issue(rate_bps, **_countries_and_number(seller, buyer))
