"""The economic formula of Specification C: half-up commission, gross = commission + net."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backend.marketplace import pricing
from backend.marketplace.pricing import BillingModel

bases = st.integers(min_value=0, max_value=10**11)
rates = st.integers(min_value=0, max_value=10_000)


@pytest.mark.parametrize(
    ("base", "rate", "commission"),
    [
        (1, 2000, 0),  # 0.2 cent rounds down
        (3, 5000, 2),  # 1.5 cents rounds half up
        (25, 2000, 5),
        (12_345, 2000, 2469),  # 2469.0
        (99_999, 1234, 12_340),  # 12339.8766
        (10_005, 50, 50),  # 50.025
        (333, 1500, 50),  # 49.95
        (0, 2000, 0),
        (1_000, 10_000, 1_000),
    ],
)
def test_commission_on_awkward_amounts(base, rate, commission):
    priced = pricing.price(base, rate)
    assert priced.commission_cents == commission
    assert priced.total_cents == base + commission


@given(bases, rates)
def test_gross_is_commission_plus_net(base, rate):
    priced = pricing.price(base, rate)
    assert priced.total_cents == priced.commission_cents + priced.base_cents
    exact = base * rate / 10_000
    assert abs(priced.commission_cents - exact) <= 0.5
    assert priced.commission_cents == int(base * rate // 10_000 + (1 if (base * rate) % 10_000 >= 5_000 else 0))


@given(st.lists(bases, max_size=30), rates)
def test_totals_are_the_sums_of_the_items(item_bases, rate):
    items = [pricing.price(b, rate) for b in item_bases]
    totals = pricing.totals(items, rate)
    assert totals.net_cents == sum(item_bases)
    assert totals.commission_cents == sum(i.commission_cents for i in items)
    assert totals.total_cents == totals.net_cents + totals.commission_cents
    assert totals.as_api()["commissionRateBps"] == rate


def test_broken_invariant_is_refused():
    with pytest.raises(pricing.PricingInvariantBroken):
        pricing.check_invariant(gross_cents=101, commission_cents=1, net_cents=99)


def test_invalid_rate_is_refused():
    with pytest.raises(ValueError):
        pricing.commission_cents(100, 10_001)


@pytest.mark.parametrize(
    ("stored", "resolved"),
    [(None, BillingModel.LEGACY_MANDATE), ("", BillingModel.LEGACY_MANDATE), ("weird", BillingModel.LEGACY_MANDATE),
     ("legacy_mandate", BillingModel.LEGACY_MANDATE), ("principal_seller", BillingModel.PRINCIPAL_SELLER)],
)
def test_billing_model_resolver(stored, resolved):
    assert pricing.resolve_billing_model(stored) is resolved
