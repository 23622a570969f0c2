"""Marketplace actors: the approval log line, one subscriber of `reservation.approved`."""

from __future__ import annotations

import dramatiq

from backend.marketplace import reservations


@dramatiq.actor(queue_name="default", max_retries=8, time_limit=60_000, throws=())
def announce_reservation_approved(reservation_id: str) -> None:
    """Log the approval (a subscriber of `reservation.approved` in `backend.events`)."""
    reservations.announce_reservation_approved(reservation_id)
