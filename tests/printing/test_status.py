"""The PrintOrderStatus machine, every (current, requested) pair."""

import itertools

import pytest

from backend.errors import ValidationError
from backend.printing.status import PrintOrderStatus as S
from backend.printing.status import cancel, next_status, rollback

FORWARD = {
    (S.PENDING, S.SENT),
    (S.SENT, S.IN_PRODUCTION),
    (S.IN_PRODUCTION, S.PRODUCED),
    (S.PRODUCED, S.DELIVERED),
}
BACK = {
    S.DELIVERED: S.PRODUCED,
    S.PRODUCED: S.IN_PRODUCTION,
    S.IN_PRODUCTION: S.SENT,
    S.SENT: S.PENDING,
}
PAIRS = list(itertools.product(S, S))


def test_the_seven_statuses_of_spec_b():
    assert [s.value for s in S] == ["draft", "pending", "sent", "in_production", "produced", "delivered", "cancelled"]


@pytest.mark.parametrize("current,requested", sorted(FORWARD))
def test_the_legitimate_forward_step_is_allowed(current, requested):
    assert next_status(current.value, requested.value) is requested


@pytest.mark.parametrize("current,requested", [p for p in PAIRS if p not in FORWARD])
def test_every_other_forward_request_is_a_validation_error_naming_both_statuses(current, requested):
    with pytest.raises(ValidationError) as refused:
        next_status(current.value, requested.value)
    assert refused.value.code == "VALIDATION_ERROR"
    assert refused.value.details == {"currentStatus": current.value, "requestedStatus": requested.value}


@pytest.mark.parametrize("current", list(S))
def test_an_unknown_requested_status_is_a_validation_error(current):
    with pytest.raises(ValidationError) as refused:
        next_status(current.value, "shipped")
    assert "nextStatus" in refused.value.details["fields"]


@pytest.mark.parametrize("current,previous", sorted(BACK.items()))
def test_rollback_moves_exactly_one_step_back(current, previous):
    assert rollback(current.value) is previous


@pytest.mark.parametrize("current", [S.DRAFT, S.PENDING, S.CANCELLED])
def test_draft_pending_and_cancelled_cannot_be_rolled_back(current):
    with pytest.raises(ValidationError) as refused:
        rollback(current.value)
    assert refused.value.details == {"currentStatus": current.value, "requestedStatus": None}


@pytest.mark.parametrize("current", [s for s in S if s not in (S.DELIVERED, S.CANCELLED)])
def test_cancellation_is_allowed_from_any_status_but_delivered(current):
    assert cancel(current.value) is S.CANCELLED


@pytest.mark.parametrize("current", [S.DELIVERED, S.CANCELLED])
def test_delivered_and_cancelled_orders_cannot_be_cancelled(current):
    with pytest.raises(ValidationError) as refused:
        cancel(current.value)
    assert refused.value.details == {"currentStatus": current.value, "requestedStatus": "cancelled"}


def test_a_walk_forward_then_back_returns_to_pending():
    status = S.PENDING
    for step in (S.SENT, S.IN_PRODUCTION, S.PRODUCED, S.DELIVERED):
        status = next_status(status, step)
    while status is not S.PENDING:
        status = rollback(status)
    assert status is S.PENDING
