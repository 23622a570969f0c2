"""Money arithmetic: integer cents, one rounding rule, shares that always add up.

Every amount is an integer number of cents and every rate an integer (basis points), so the only
rounding anywhere is the division of an integer product by an integer scale, done here:
half up, exact in integers (no float, no Decimal context). The platform's amounts are never
negative, and the functions refuse negative input rather than guess a sign convention.
"""

from __future__ import annotations

from collections.abc import Sequence

BPS_SCALE = 10_000


def round_half_up_div(numerator: int, denominator: int) -> int:
    """`numerator / denominator` rounded half up to an integer (0.5 goes up)."""
    if numerator < 0 or denominator <= 0:
        raise ValueError(f"round_half_up_div needs numerator >= 0 and denominator > 0, got {numerator}/{denominator}")
    return (2 * numerator + denominator) // (2 * denominator)


def apply_bps(amount_cents: int, rate_bps: int) -> int:
    """`amount x rate / 10 000`, rounded half up to the cent (commission, VAT)."""
    if not 0 <= rate_bps <= BPS_SCALE:
        raise ValueError(f"rate {rate_bps} bps outside [0, {BPS_SCALE}]")
    return round_half_up_div(amount_cents * rate_bps, BPS_SCALE)


def split_largest_remainder(total: int, weights: Sequence[int]) -> list[int]:
    """`total` shared in proportion to `weights`, each share an integer, the shares summing to
    `total` exactly (largest-remainder method; ties go to the earlier weight)."""
    if total < 0 or not weights or any(w < 0 for w in weights) or sum(weights) == 0:
        raise ValueError(f"cannot split {total} by {list(weights)}")
    whole = sum(weights)
    shares = [total * w // whole for w in weights]
    remainders = sorted(range(len(weights)), key=lambda i: (-(total * weights[i] % whole), i))
    for i in remainders[: total - sum(shares)]:
        shares[i] += 1
    return shares
