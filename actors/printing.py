"""Printing actors: the deposit a reservation's approval opens, and the orders of a batch status advance."""

from __future__ import annotations

import dramatiq
from periodiq import cron

from backend.errors import DomainError, NotFound, ValidationError
from backend.printing import batch_advance, deposits


@dramatiq.actor(queue_name="printing", max_retries=8, time_limit=60_000, throws=(DomainError,))
def open_print_deposit(reservation_id: str) -> None:
    """`reservation.approved`: the deposit of visuals becomes possible (`to_deposit`)."""
    deposits.open_deposit(reservation_id)


@dramatiq.actor(queue_name="printing", max_retries=8, time_limit=60_000, throws=(NotFound, ValidationError))
def advance_batch_run(run_id: str) -> None:
    """A batch status advance, group after group from where it stands (a redelivery or a second
    message only continues it); a long run hands itself over to a new message. A transient
    failure (the database unreachable) is retried: a run must never stay running."""
    batch_advance.advance_run(run_id)


@dramatiq.actor(queue_name="printing", max_retries=8, time_limit=60_000, throws=(NotFound, ValidationError))
def advance_batch_order(run_id: str, order_id: str) -> None:
    """A message of the former one-message-per-order advance, still queued when the workers were
    updated: it continues its run (the order is settled with its group)."""
    batch_advance.advance_run(run_id)


@dramatiq.actor(queue_name="printing", max_retries=0, time_limit=120_000, throws=(),
                periodic=cron("* * * * *"))
def resume_stalled_batch_advances() -> None:
    """Send again the unsettled orders of batch advances whose current group stopped moving."""
    batch_advance.resume_stalled_runs()
