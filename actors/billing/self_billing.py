"""Self-billing actors (spec C): mandate events (whose handler is registered with the e-signature
webhook processing here, in every process that imports the actors) and their reconciliation, the
self-billing scheduler."""

from __future__ import annotations

import dramatiq
from periodiq import cron

from backend.billing.self_billing import mandate_events, scheduler
from backend.onboarding.events import register_event_handler
from backend.runtime import current_runtime

register_event_handler(mandate_events.HANDLER_NAME, mandate_events.handle_signature_event)


@dramatiq.actor(queue_name="billing", max_retries=8, time_limit=120_000, throws=())
def apply_self_billing_mandate_event(mandate_id: str, event_id: str, event_name: str) -> None:
    """Queued by the mandate's webhook handler: confirm with the provider, store the signed PDF,
    move the mandate (a provider failure raises and is retried)."""
    runtime = current_runtime()
    mandate_events.apply_provider_event(mandate_id, event_id, event_name, provider=runtime.esign,
                                                     storage=runtime.storage)


@dramatiq.actor(queue_name="default", max_retries=0, time_limit=600_000, throws=(), periodic=cron("*/15 * * * *"))
def reconcile_self_billing_mandates() -> None:
    """Repair missed webhooks: mandates pending with no change for an hour are asked of the provider."""
    runtime = current_runtime()
    mandate_events.reconcile_pending(older_than_seconds=runtime.config.esign_reconcile_after_seconds,
                                                  provider=runtime.esign, storage=runtime.storage)


@dramatiq.actor(queue_name="billing", max_retries=0, time_limit=1_500_000, throws=(), periodic=cron("* * * * *"))
def self_billing_scheduler() -> None:
    """Every minute: a self-billing pass when `SELF_BILLING_SCHEDULER_ENABLED` and
    `SELF_BILLING_SCHEDULER_INTERVAL_MS` has elapsed since the last pass (one at a time)."""
    config = current_runtime().config
    if not config.self_billing_scheduler_enabled:
        return
    scheduler.run_if_due(interval_ms=config.self_billing_scheduler_interval_ms, config=config)
