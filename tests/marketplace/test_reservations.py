"""Review and counter-proposal transitions, the approval event, double-booking."""

from datetime import UTC, datetime

import pytest

from actors.marketplace import announce_reservation_approved
from backend.db import transaction
from backend.errors import Conflict, NotFound, ValidationError
from backend.marketplace import cart, reservations
from backend.marketplace.models import Reservation
from backend.marketplace.reservations import Review
from backend.outbox import OutboxMessage
from tests.marketplace.conftest import RATE_BPS, add_to_cart

RESERVATION_APPROVED = "announce_reservation_approved"  # one subscriber of reservation.approved


@pytest.fixture
def book(make_org, make_ad_space, make_campaign):
    """Check out one ad space for a campaign: returns the pending reservation."""

    def make(space=None, dates=None, industrial=None):
        industrial = industrial or make_org("industrial")
        campaign = make_campaign(industrial, **({"dates": dates} if dates else {}))
        space = space or make_ad_space()
        add_to_cart(industrial.id, campaign.id, space.id)
        (reservation,) = cart.checkout(organization_id=industrial.id, user_id=None, rate_bps=RATE_BPS)
        return reservation

    return make


def _review(reservation, decision, **kwargs):
    return reservations.review_reservation(
        reservation_id=reservation.id, distributor_organization_id=reservation.distributor_organization_id,
        decision=decision, **kwargs,
    )


def _events(reservation_id):
    return [m for m in OutboxMessage.select().where(OutboxMessage.actor_name == RESERVATION_APPROVED)
            if m.args == [reservation_id]]


def test_distributor_approval_writes_one_event(book):
    reservation = book()
    approved = _review(reservation, Review.APPROVED, note="OK")
    assert (approved.status, approved.review_note) == ("approved", "OK") and approved.approved_at
    assert len(_events(reservation.id)) == 1
    with pytest.raises(Conflict):
        _review(reservation, Review.APPROVED)
    assert len(_events(reservation.id)) == 1


def test_rolled_back_approval_writes_no_event(book):
    reservation = book()
    with pytest.raises(RuntimeError), transaction():
        _review(reservation, Review.APPROVED)
        raise RuntimeError("the request failed after the approval")
    assert Reservation.get_by_id(reservation.id).status == "pending_review"
    assert _events(reservation.id) == []


def test_rejection_is_final(book):
    reservation = book()
    assert _review(reservation, Review.REJECTED).status == "rejected"
    for decision in Review:
        with pytest.raises(Conflict):
            _review(reservation, decision, price_cents=1)
    assert _events(reservation.id) == []


def test_other_distributors_cannot_review(book, make_org):
    reservation = book()
    with pytest.raises(NotFound):
        reservations.review_reservation(reservation_id=reservation.id,
                                        distributor_organization_id=make_org("distributor").id,
                                        decision=Review.APPROVED)


def test_counter_proposal_needs_a_price(book):
    with pytest.raises(ValidationError):
        _review(book(), Review.COUNTER_PROPOSAL)


def test_accepted_counter_proposal_refreezes_pricing_and_approves(book):
    reservation = book()
    Reservation.update(billing_model=None).where(Reservation.id == reservation.id).execute()
    countered = _review(reservation, Review.COUNTER_PROPOSAL, price_cents=7_777)
    assert (countered.status, countered.counter_price_cents) == ("counter_proposed", 7_777)
    assert _events(reservation.id) == []
    accepted = reservations.accept_counter_proposal(
        reservation_id=reservation.id, industrial_organization_id=reservation.industrial_organization_id,
        rate_bps=1500,
    )
    stored = Reservation.get_by_id(accepted.id)
    assert (stored.status, stored.billing_model) == ("approved", "principal_seller")
    assert (stored.base_amount_cents, stored.commission_amount_cents, stored.total_amount_cents,
            stored.commission_rate_bps) == (7_777, 1167, 8_944, 1500)
    assert len(_events(reservation.id)) == 1


def test_declined_counter_proposal_leaves_the_reservation_rejected(book):
    reservation = book()
    _review(reservation, Review.COUNTER_PROPOSAL, price_cents=5_000)
    declined = reservations.decline_counter_proposal(
        reservation_id=reservation.id, industrial_organization_id=reservation.industrial_organization_id
    )
    assert declined.status == "rejected"
    with pytest.raises(Conflict):
        reservations.accept_counter_proposal(
            reservation_id=reservation.id, industrial_organization_id=reservation.industrial_organization_id,
            rate_bps=RATE_BPS,
        )


def test_counter_proposal_answers_need_a_counter_proposal(book):
    reservation = book()
    for answer in (reservations.decline_counter_proposal, reservations.accept_counter_proposal):
        kwargs = {"rate_bps": RATE_BPS} if answer is reservations.accept_counter_proposal else {}
        with pytest.raises(Conflict):
            answer(reservation_id=reservation.id, industrial_organization_id=reservation.industrial_organization_id,
                   **kwargs)


def test_only_the_industrial_answers_a_counter_proposal(book):
    reservation = book()
    _review(reservation, Review.COUNTER_PROPOSAL, price_cents=5_000)
    with pytest.raises(NotFound):
        reservations.decline_counter_proposal(
            reservation_id=reservation.id, industrial_organization_id=reservation.distributor_organization_id
        )


def test_overlapping_approvals_of_one_ad_space_are_refused(book, make_ad_space):
    space = make_ad_space()
    first = book(space, dates=(datetime(2026, 6, 1, tzinfo=UTC), datetime(2026, 6, 15, tzinfo=UTC)))
    overlapping = book(space, dates=(datetime(2026, 6, 14, tzinfo=UTC), datetime(2026, 6, 30, tzinfo=UTC)))
    adjacent = book(space, dates=(datetime(2026, 6, 15, tzinfo=UTC), datetime(2026, 6, 20, tzinfo=UTC)))
    _review(first, Review.APPROVED)
    with pytest.raises(Conflict) as refused:
        _review(overlapping, Review.APPROVED)
    assert refused.value.details == {"adSpaceId": space.id}
    assert Reservation.get_by_id(overlapping.id).status == "pending_review"
    assert _events(overlapping.id) == []
    assert _review(adjacent, Review.APPROVED).status == "approved"
    assert _review(book(), Review.APPROVED).status == "approved"  # another ad space, same dates
    _review(overlapping, Review.COUNTER_PROPOSAL, price_cents=1_000)
    with pytest.raises(Conflict):  # accepting is a passage to approved too
        reservations.accept_counter_proposal(reservation_id=overlapping.id, rate_bps=RATE_BPS,
                                             industrial_organization_id=overlapping.industrial_organization_id)
    assert Reservation.get_by_id(overlapping.id).status == "counter_proposed"
    assert _events(overlapping.id) == []


def test_the_approval_consumer_logs_approved_reservations_only(book, log_lines):
    pending, approved = book(), book()
    _review(approved, Review.APPROVED)
    announce_reservation_approved.fn(pending.id)
    announce_reservation_approved.fn(approved.id)
    lines = [line for line in log_lines() if line["scope"] == "marketplace.reservation.approved"]
    assert [(line["reservationId"], line["billingModel"]) for line in lines] == [(approved.id, "principal_seller")]
