"""Billing actors (spec C): auto-collection on approval, SEPA mandates, idempotency-key purge,
self-billing mandate events (whose handler is registered with the e-signature webhook processing
here, in every process that imports the actors) and their reconciliation, the self-billing scheduler."""

from __future__ import annotations

import dramatiq
from periodiq import cron

from backend.billing import collection, idempotency, mandates, scheduler, self_billing_mandate_events
from backend.billing import post_invoice_hook as post_invoice
from backend.onboarding.events import register_event_handler
from backend.runtime import current_runtime

register_event_handler(self_billing_mandate_events.HANDLER_NAME, self_billing_mandate_events.handle_signature_event)


@dramatiq.actor(queue_name="billing", max_retries=5, time_limit=120_000, throws=())
def auto_collect_reservation(reservation_id: str) -> None:
    """Subscriber of `reservation.approved`: collect the reservation total (key
    `auto-collect-<reservationId>`); a refusal is logged and left to the manual route."""
    collection.auto_collect(reservation_id, config=current_runtime().config)


@dramatiq.actor(queue_name="billing", max_retries=8, time_limit=60_000, throws=())
def record_sepa_mandate(signature_request_id: str) -> None:
    """Subscriber of `onboarding.envelope_signed`: the organization's active SEPA mandate."""
    mandates.record_from_envelope(signature_request_id)


@dramatiq.actor(queue_name="billing", max_retries=8, time_limit=60_000, throws=())
def end_sepa_mandates(organization_id: str) -> None:
    """Subscriber of `organization.iban_changed`: the mandate named the old account."""
    mandates.end_active_mandates(organization_id, reason="iban_changed")


@dramatiq.actor(queue_name="default", max_retries=0, time_limit=120_000, throws=(), periodic=cron("17 * * * *"))
def purge_idempotency_keys() -> None:
    """Idempotency keys are kept 24 h (API.md)."""
    idempotency.purge_expired()


@dramatiq.actor(queue_name="documents", max_retries=3, time_limit=300_000, throws=())
def run_post_invoice_hook(invoice_id: str) -> None:
    """Subscriber of `invoice.issued` (spec C post-invoice hook): the Factur-X PDF stored, then
    the e-invoice transmission draft. The service logs its failures and never raises; it runs on
    the `documents` queue so PDF rendering never holds collections back."""
    runtime = current_runtime()
    post_invoice.run_post_invoice_hook(invoice_id, storage=runtime.storage, config=runtime.config)


@dramatiq.actor(queue_name="billing", max_retries=8, time_limit=120_000, throws=())
def apply_self_billing_mandate_event(mandate_id: str, event_id: str, event_name: str) -> None:
    """Queued by the mandate's webhook handler: confirm with the provider, store the signed PDF,
    move the mandate (a provider failure raises and is retried)."""
    runtime = current_runtime()
    self_billing_mandate_events.apply_provider_event(mandate_id, event_id, event_name, provider=runtime.esign,
                                                     storage=runtime.storage)


@dramatiq.actor(queue_name="default", max_retries=0, time_limit=600_000, throws=(), periodic=cron("*/15 * * * *"))
def reconcile_self_billing_mandates() -> None:
    """Repair missed webhooks: mandates pending with no change for an hour are asked of the provider."""
    runtime = current_runtime()
    self_billing_mandate_events.reconcile_pending(older_than_seconds=runtime.config.esign_reconcile_after_seconds,
                                                  provider=runtime.esign, storage=runtime.storage)


@dramatiq.actor(queue_name="billing", max_retries=0, time_limit=1_500_000, throws=(), periodic=cron("* * * * *"))
def self_billing_scheduler() -> None:
    """Every minute: a self-billing pass when `SELF_BILLING_SCHEDULER_ENABLED` and
    `SELF_BILLING_SCHEDULER_INTERVAL_MS` has elapsed since the last pass (one at a time)."""
    config = current_runtime().config
    if not config.self_billing_scheduler_enabled:
        return
    scheduler.run_if_due(interval_ms=config.self_billing_scheduler_interval_ms, config=config)
