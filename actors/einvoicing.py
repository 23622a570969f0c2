"""E-invoicing actors: the dispatch of a new transmission (fed by the outbox when a draft is
created), the processing of an XP Z12-013 platform's stored callback (fed by the outbox when it
is received), and the polling schedule (a job every minute; a pass when the interval has elapsed).
The operator client is the one the worker built at boot (`current_runtime().operator`)."""

from __future__ import annotations

import dramatiq
from periodiq import cron

from backend.einvoicing import afnor_callbacks, lifecycle, polling
from backend.einvoicing.drafts import DISPATCH_ACTOR
from backend.errors import DomainError
from backend.runtime import current_runtime


@dramatiq.actor(actor_name=DISPATCH_ACTOR, queue_name="einvoicing", max_retries=5,
                time_limit=int(lifecycle.DISPATCH_TIME_LIMIT.total_seconds() * 1000), throws=(DomainError,))
def dispatch_einvoice_transmission(transmission_id: str) -> None:
    """Post a `pending_dispatch` transmission to the operator (a redelivered message finds it
    claimed or sent, and does nothing)."""
    runtime = current_runtime()
    lifecycle.dispatch(transmission_id, client=runtime.operator, storage=runtime.storage,
                       test_mode=runtime.config.e2e_test_mode)


@dramatiq.actor(actor_name=afnor_callbacks.PROCESSING_ACTOR, queue_name="webhooks", max_retries=5,
                time_limit=120_000, throws=(DomainError,))
def process_platform_callback(key: str) -> None:
    """Apply the flow a stored platform callback names, read again from the platform (a platform
    that fails is retried; polling catches up whatever is left)."""
    afnor_callbacks.process_callback(key, client=current_runtime().operator)


@dramatiq.actor(queue_name="einvoicing", max_retries=0, time_limit=900_000, throws=(),
                periodic=cron("* * * * *"))
def poll_einvoice_transmissions() -> None:
    """Every minute: a polling pass when `EINVOICING_POLLING_ENABLED` and the interval is due."""
    runtime = current_runtime()
    if not runtime.config.einvoicing_polling_enabled:
        return
    polling.poll_if_due(interval_ms=runtime.config.einvoicing_polling_interval_ms, client=runtime.operator,
                        storage=runtime.storage, test_mode=runtime.config.e2e_test_mode)
