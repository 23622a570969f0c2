"""Onboarding actors: provider webhook events, envelope creation, signed files, reconciliation.

The e-signature client is the one the worker built at boot (`current_runtime().esign`)."""

from __future__ import annotations

import dramatiq
from periodiq import cron

from backend.errors import DomainError
from backend.onboarding import documents, envelopes, events, reconciliation
from backend.runtime import current_runtime


@dramatiq.actor(queue_name="webhooks", max_retries=8, time_limit=120_000, throws=(DomainError,))
def process_signature_event(event_id: str) -> None:
    """Apply a stored provider event to its envelope, then offer it to further handlers."""
    events.process_signature_event(event_id, provider=current_runtime().esign)


@dramatiq.actor(queue_name="documents", max_retries=3, time_limit=300_000, throws=(DomainError,))
def create_signature_envelope(signature_request_id: str) -> None:
    """Render the documents and create the envelope at the provider (failures end in `error`)."""
    runtime = current_runtime()
    envelopes.create_signature_envelope(signature_request_id, provider=runtime.esign,
                                        storage=runtime.storage, config=runtime.config)


@dramatiq.actor(queue_name="documents", max_retries=8, time_limit=300_000, throws=(DomainError,))
def store_signed_documents(signature_request_id: str) -> None:
    """Keep the signed PDFs and the audit trail of a signed envelope in private storage."""
    runtime = current_runtime()
    documents.store_signed_documents(signature_request_id, provider=runtime.esign, storage=runtime.storage)


@dramatiq.actor(queue_name="default", max_retries=0, time_limit=600_000, throws=(),
                periodic=cron("*/15 * * * *"))
def reconcile_pending_envelopes() -> None:
    """Repair missed webhooks: envelopes pending with no move for an hour are asked of the provider."""
    runtime = current_runtime()
    reconciliation.reconcile_pending(older_than_seconds=runtime.config.esign_reconcile_after_seconds,
                                     provider=runtime.esign)
