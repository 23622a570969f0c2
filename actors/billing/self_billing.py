"""Self-billing actors (spec C): mandate events (routed from every processed e-signature provider
event, then applied) and their reconciliation, the self-billing scheduler."""

from __future__ import annotations

import dramatiq
from periodiq import cron

from backend.billing.self_billing import acceptance, mandate_events, scheduler
from backend.runtime import current_runtime


@dramatiq.actor(queue_name="billing", max_retries=8, time_limit=60_000, throws=())
def route_self_billing_mandate_event(event_id: str) -> None:
    """Subscriber of `onboarding.signature_event_processed`: queue the event for its self-billing
    mandate when it may move it (never raises: a failure is logged)."""
    mandate_events.handle_signature_event(event_id)


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


@dramatiq.actor(queue_name="billing", max_retries=0, time_limit=600_000, throws=(), periodic=cron("30 2 * * *"))
def record_tacit_acceptances() -> None:
    """Daily: the self-billed invoices still pending 30 days after they were e-mailed are tacitly
    accepted (a missed day is caught up by the next: the pass takes every one past its deadline)."""
    acceptance.record_tacit_acceptances()
