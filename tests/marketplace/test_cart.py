"""Cart breakdown (Specification C) and checkout gating."""

from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backend.db import transaction
from backend.errors import Conflict, Forbidden, NotFound, ValidationError
from backend.marketplace import cart
from backend.marketplace.models import CartItem, Reservation
from tests.marketplace.conftest import RATE_BPS, add_to_cart


def test_cart_shows_the_commission_breakdown_per_item_and_in_total(make_org, make_ad_space, make_campaign):
    industrial = make_org("industrial")
    campaign = make_campaign(industrial)
    for price in (12_345, 333, 1):
        add_to_cart(industrial.id, campaign.id, make_ad_space(price).id)
    current = cart.current_cart(organization_id=industrial.id, rate_bps=RATE_BPS)
    lines = sorted((line.pricing.as_api() for line in current.lines), key=lambda p: -p["reservationTotalCents"])
    assert lines == [
        {"netDistributorAmountCents": 12_345, "platformCommissionAmountCents": 2469,
         "industrialTotalPayableCents": 14_814, "reservationTotalCents": 12_345, "commissionRateBps": 2000},
        {"netDistributorAmountCents": 333, "platformCommissionAmountCents": 67,
         "industrialTotalPayableCents": 400, "reservationTotalCents": 333, "commissionRateBps": 2000},
        {"netDistributorAmountCents": 1, "platformCommissionAmountCents": 0,
         "industrialTotalPayableCents": 1, "reservationTotalCents": 1, "commissionRateBps": 2000},
    ]
    assert current.totals.as_api() == {"totalNetDistributorCents": 12_679, "totalPlatformCommissionCents": 2536,
                                       "totalIndustrialPayableCents": 15_215, "commissionRateBps": 2000}


def test_same_ad_space_twice_in_one_campaign_is_a_conflict(make_org, make_ad_space, make_campaign):
    industrial = make_org("industrial")
    campaign, space = make_campaign(industrial), make_ad_space()
    add_to_cart(industrial.id, campaign.id, space.id)
    with pytest.raises(Conflict):
        add_to_cart(industrial.id, campaign.id, space.id)


def test_another_organizations_campaign_and_items_are_not_found(make_org, make_ad_space, make_campaign):
    owner, other = make_org("industrial"), make_org("industrial")
    campaign, space = make_campaign(owner), make_ad_space()
    with pytest.raises(NotFound):
        add_to_cart(other.id, campaign.id, space.id)
    line = add_to_cart(owner.id, campaign.id, space.id)
    with pytest.raises(NotFound):
        cart.remove_cart_item(organization_id=other.id, item_id=line.item.id)
    cart.remove_cart_item(organization_id=owner.id, item_id=line.item.id)
    assert cart.current_cart(organization_id=owner.id, rate_bps=RATE_BPS).lines == []


@pytest.mark.parametrize("kyb_status", [None, "submitted", "in_review", "rejected"])
def test_checkout_is_refused_until_kyb_is_approved(make_org, make_ad_space, make_campaign, kyb_status):
    industrial = make_org("industrial", kyb_status=kyb_status)
    campaign = make_campaign(industrial)
    add_to_cart(industrial.id, campaign.id, make_ad_space().id)
    with pytest.raises(Forbidden) as refused:
        cart.checkout(organization_id=industrial.id, user_id=None, rate_bps=RATE_BPS)
    assert refused.value.details == {"reason": "kyb_not_approved"}
    assert CartItem.select().where(CartItem.organization_id == industrial.id).count() == 1


def test_checkout_freezes_one_reservation_per_item_and_empties_the_cart(make_org, make_ad_space, make_campaign):
    industrial = make_org("industrial")
    campaign = make_campaign(industrial)
    spaces = [make_ad_space(999), make_ad_space(10_005)]
    for space in spaces:
        add_to_cart(industrial.id, campaign.id, space.id)
    created = cart.checkout(organization_id=industrial.id, user_id=None, rate_bps=1234)
    assert cart.current_cart(organization_id=industrial.id, rate_bps=RATE_BPS).lines == []
    rows = {r.ad_space_id: r for r in Reservation.select().where(Reservation.id.in_([r.id for r in created]))}
    first, second = rows[spaces[0].id], rows[spaces[1].id]
    assert (first.status, first.billing_model) == ("pending_review", "principal_seller")
    assert (first.base_amount_cents, first.commission_amount_cents, first.total_amount_cents,
            first.commission_rate_bps) == (999, 123, 1122, 1234)
    assert (second.base_amount_cents, second.commission_amount_cents) == (10_005, 1235)
    assert first.distributor_organization_id == spaces[0].store.organization_id
    assert (first.starts_at, first.ends_at) == (campaign.starts_at, campaign.ends_at)


def test_checkout_of_an_empty_cart_is_a_conflict(make_org):
    with pytest.raises(Conflict):
        cart.checkout(organization_id=make_org("industrial").id, user_id=None, rate_bps=RATE_BPS)


def test_a_campaign_must_end_after_it_starts(make_org, make_campaign):
    moment = datetime(2026, 6, 1, tzinfo=UTC)
    with pytest.raises(ValidationError):
        make_campaign(make_org("industrial"), dates=(moment, moment))


class _Undo(Exception):
    """Rolls one hypothesis example back (the test's own transaction stays open)."""


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prices=st.lists(st.integers(min_value=0, max_value=1_000_000_000), min_size=1, max_size=5),
       rate=st.integers(min_value=0, max_value=10_000))
def test_cart_and_checkout_arithmetic_on_awkward_amounts(make_org, make_ad_space, make_campaign, prices, rate):
    """Through the real cart and checkout: every line and every frozen reservation keeps
    gross = commission + net with the half-up commission, and the totals are the sums of the lines."""
    try:
        with transaction():
            industrial = make_org("industrial")
            campaign = make_campaign(industrial)
            for price in prices:
                add_to_cart(industrial.id, campaign.id, make_ad_space(price).id)
            current = cart.current_cart(organization_id=industrial.id, rate_bps=rate)
            lines = [line.pricing for line in current.lines]
            assert sorted(p.base_cents for p in lines) == sorted(prices)
            for p in lines:
                assert p.total_cents == p.commission_cents + p.base_cents
                assert p.commission_cents == (p.base_cents * rate + 5_000) // 10_000
            totals = current.totals
            assert (totals.net_cents, totals.commission_cents, totals.total_cents) == (
                sum(p.base_cents for p in lines), sum(p.commission_cents for p in lines),
                sum(p.total_cents for p in lines))
            assert totals.total_cents == totals.commission_cents + totals.net_cents

            created = cart.checkout(organization_id=industrial.id, user_id=None, rate_bps=rate)
            stored = list(Reservation.select().where(Reservation.id.in_([r.id for r in created])))
            assert sorted((r.base_amount_cents, r.commission_amount_cents, r.total_amount_cents) for r in stored) == \
                sorted((p.base_cents, p.commission_cents, p.total_cents) for p in lines)
            assert sum(r.total_amount_cents for r in stored) == totals.total_cents
            assert {r.commission_rate_bps for r in stored} == {rate}
            raise _Undo
    except _Undo:
        pass
