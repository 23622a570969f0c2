"""The economic formula of Specification C, in one place (no database).

    industrialTotal = storeBase + platformCommission
    commission      = storeBase x rateBps / 10 000, rounded half up to the cent

The commission is the only amount that is ever rounded, and it is rounded here only: the
store base is an integer number of cents set by the distributor, and the industrial total is a
sum of integers. Half up (0.5 cent goes to the platform) is exact in integers:
`(base * rate + 5000) // 10000` for non-negative amounts. The distributor receives the store base
(`net`); the industrial pays the total (`gross`). `check_invariant` verifies
`gross = commission + net` before anything is written.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from backend.money import BPS_SCALE, apply_bps


class BillingModel(StrEnum):
    LEGACY_MANDATE = "legacy_mandate"
    PRINCIPAL_SELLER = "principal_seller"


def resolve_billing_model(value: str | None) -> BillingModel:
    """Specification C resolver: an absent or unknown value is `legacy_mandate`."""
    try:
        return BillingModel(value)
    except ValueError:
        return BillingModel.LEGACY_MANDATE


class PricingInvariantBroken(AssertionError):
    """gross != commission + net: a programming error, never written to the database."""


def commission_cents(base_cents: int, rate_bps: int) -> int:
    if base_cents < 0 or not 0 <= rate_bps <= BPS_SCALE:
        raise ValueError(f"invalid base {base_cents} or rate {rate_bps}")
    return apply_bps(base_cents, rate_bps)


@dataclass(frozen=True)
class Pricing:
    """One reservation's amounts: the store base (net to the distributor), the platform
    commission and the industrial total (gross), at a commission rate."""

    base_cents: int
    commission_cents: int
    total_cents: int
    rate_bps: int

    def as_api(self) -> dict[str, int]:
        """The Specification C field names (`reservationTotalCents` keeps its older meaning)."""
        return {
            "netDistributorAmountCents": self.base_cents,
            "platformCommissionAmountCents": self.commission_cents,
            "industrialTotalPayableCents": self.total_cents,
            "reservationTotalCents": self.base_cents,
            "commissionRateBps": self.rate_bps,
        }


def check_invariant(*, gross_cents: int, commission_cents: int, net_cents: int) -> None:
    if gross_cents != commission_cents + net_cents:
        raise PricingInvariantBroken(
            f"gross {gross_cents} != commission {commission_cents} + net {net_cents}"
        )


def price(base_cents: int, rate_bps: int) -> Pricing:
    commission = commission_cents(base_cents, rate_bps)
    pricing = Pricing(base_cents, commission, base_cents + commission, rate_bps)
    check_invariant(gross_cents=pricing.total_cents, commission_cents=commission, net_cents=base_cents)
    return pricing


@dataclass(frozen=True)
class Totals:
    net_cents: int
    commission_cents: int
    total_cents: int
    rate_bps: int

    def as_api(self) -> dict[str, int]:
        return {
            "totalNetDistributorCents": self.net_cents,
            "totalPlatformCommissionCents": self.commission_cents,
            "totalIndustrialPayableCents": self.total_cents,
            "commissionRateBps": self.rate_bps,
        }


def totals(items: Iterable[Pricing], rate_bps: int) -> Totals:
    """Aggregates are sums of the items' rounded amounts, never a rounding of the sum, so the
    cart shows exactly what the reservations will freeze."""
    items = list(items)
    result = Totals(
        net_cents=sum(p.base_cents for p in items),
        commission_cents=sum(p.commission_cents for p in items),
        total_cents=sum(p.total_cents for p in items),
        rate_bps=rate_bps,
    )
    check_invariant(gross_cents=result.total_cents, commission_cents=result.commission_cents,
                    net_cents=result.net_cents)
    return result
