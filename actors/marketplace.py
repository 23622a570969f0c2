"""Marketplace actors: the consumer of the `reservation.approved` outbox event."""

from __future__ import annotations

import dramatiq

from backend.marketplace import reservations


@dramatiq.actor(queue_name="default", max_retries=8, time_limit=60_000, throws=())
def announce_reservation_approved(reservation_id: str) -> None:
    """Billing (auto-collection) and printing (deposit) subscribe here; a no-op log for now."""
    reservations.announce_reservation_approved(reservation_id)
