"""The one rounding rule and the largest-remainder split."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backend.billing.vat import amount_incl_tax_cents, vat_amount_cents, vat_rate_bps, vat_rate_percent
from backend.money import apply_bps, round_half_up_div, split_largest_remainder


def test_half_up_rounding_at_the_half_cent():
    assert apply_bps(12345, 2000) == 2469  # 2469.0
    assert apply_bps(1, 5000) == 1  # 0.5 goes up
    assert apply_bps(1, 4999) == 0
    assert round_half_up_div(5, 2) == 3
    with pytest.raises(ValueError):
        round_half_up_div(-1, 2)


def test_vat_from_a_frozen_rate():
    assert vat_rate_bps(20) == 2000 and vat_rate_bps("5.5") == 550
    assert str(vat_rate_percent(550)) == "5.50"
    assert vat_amount_cents(14814, 2000) == 2963  # 2962.8
    assert amount_incl_tax_cents(14814, 2000) == 17777
    with pytest.raises(ValueError):
        vat_rate_bps("5.555")


@given(st.integers(0, 10**9), st.lists(st.integers(0, 10**7), min_size=1, max_size=6).filter(lambda w: sum(w) > 0))
def test_largest_remainder_shares_sum_to_the_total(total, weights):
    shares = split_largest_remainder(total, weights)
    assert sum(shares) == total
    whole = sum(weights)
    assert all(abs(share * whole - total * w) < whole for share, w in zip(shares, weights, strict=True))
