"""Marketplace actors: the `reservation.approved` outbox event and its fan-out to subscribers."""

from __future__ import annotations

import dramatiq

from actors.printing import open_print_deposit
from backend.marketplace import reservations

# The subscribers of `reservation.approved`: each gets its own message, so each is retried on its
# own and a failing one never holds the others back. Billing (auto-collection) joins here.
RESERVATION_APPROVED_SUBSCRIBERS = (open_print_deposit,)


@dramatiq.actor(queue_name="default", max_retries=8, time_limit=60_000, throws=())
def announce_reservation_approved(reservation_id: str) -> None:
    """Log the approval and fan it out to the subscribers (each idempotent: a redelivery is harmless)."""
    reservations.announce_reservation_approved(reservation_id)
    for subscriber in RESERVATION_APPROVED_SUBSCRIBERS:
        subscriber.send(reservation_id)
