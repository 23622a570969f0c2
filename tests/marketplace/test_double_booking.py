"""Two concurrent approvals of overlapping reservations of one ad space, on two connections:
the database refuses the second whatever the interleaving."""

import threading
import time

import pytest

from backend.db import database, transaction
from backend.errors import Conflict
from backend.marketplace import cart, reservations
from backend.marketplace.models import Reservation
from backend.marketplace.reservations import Review
from tests.marketplace.conftest import RATE_BPS, add_to_cart


@pytest.fixture
def two_pending(make_org, make_ad_space, make_campaign):
    with database.connection_context():
        space = make_ad_space()
        pending = []
        for _ in range(2):
            industrial = make_org("industrial")
            campaign = make_campaign(industrial)
            add_to_cart(industrial.id, campaign.id, space.id)
            pending += cart.checkout(organization_id=industrial.id, user_id=None, rate_bps=RATE_BPS)
    return pending


def _approve(reservation):
    return reservations.review_reservation(
        reservation_id=reservation.id, distributor_organization_id=reservation.distributor_organization_id,
        decision=Review.APPROVED,
    )


def _wait_until_blocked(pid: int) -> None:
    """Poll pg_stat_activity until backend `pid` waits on a lock (bounded, no fixed sleep)."""
    deadline = time.monotonic() + 10
    with database.connection_context():
        while time.monotonic() < deadline:
            row = database.execute_sql("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
            if row and row[0] == "Lock":
                return
    raise AssertionError("the second approval never waited on the first")


@pytest.mark.committed
def test_second_concurrent_approval_is_refused(two_pending):
    first, second = two_pending
    first_written, second_connected, release = threading.Event(), threading.Event(), threading.Event()
    second_pid: list[int] = []
    outcome: dict[str, object] = {}

    def approve_first():
        with database.connection_context(), transaction():
            _approve(first)
            first_written.set()
            release.wait(10)  # hold the uncommitted approval until the second one waits on it
        outcome["first"] = "approved"

    def approve_second():
        with database.connection_context():
            second_pid.append(database.execute_sql("SELECT pg_backend_pid()").fetchone()[0])
            second_connected.set()
            try:
                _approve(second)
                outcome["second"] = "approved"
            except Conflict as exc:
                outcome["second"] = exc

    a = threading.Thread(target=approve_first)
    a.start()
    assert first_written.wait(10)
    b = threading.Thread(target=approve_second)
    b.start()
    assert second_connected.wait(10)
    _wait_until_blocked(second_pid[0])
    release.set()
    a.join(10)
    b.join(10)
    assert outcome["first"] == "approved"
    assert isinstance(outcome["second"], Conflict)
    with database.connection_context():
        statuses = {r.id: r.status for r in Reservation.select().where(Reservation.id.in_([first.id, second.id]))}
    assert statuses == {first.id: "approved", second.id: "pending_review"}
