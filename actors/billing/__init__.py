"""Billing actors (spec C): auto-collection on approval, SEPA mandates, idempotency-key purge, the
post-invoice hook; the self-billing ones are in `actors.billing.self_billing`, declared below."""

from __future__ import annotations

import dramatiq
from periodiq import cron

from backend.billing import idempotency, payouts, sepa_mandates
from backend.billing.bank import overdue
from backend.billing.collection import auto
from backend.billing.documents import mailing
from backend.billing.invoicing import post_invoice_hook as post_invoice
from backend.runtime import current_runtime


@dramatiq.actor(queue_name="billing", max_retries=5, time_limit=120_000, throws=())
def auto_collect_reservation(reservation_id: str) -> None:
    """Subscriber of `reservation.approved`: collect the reservation total (key
    `auto-collect-<reservationId>`); a refusal is logged and left to the manual route."""
    auto.auto_collect(reservation_id, config=current_runtime().config)


@dramatiq.actor(queue_name="billing", max_retries=0, time_limit=600_000, throws=(), periodic=cron("* * * * *"))
def retry_auto_collections() -> None:
    """Every minute: collect again the reservations whose auto-collection failed at least
    `AUTO_COLLECTION_RETRY_MINUTES` ago (API.md)."""
    auto.retry_due_collections(config=current_runtime().config)


@dramatiq.actor(queue_name="billing", max_retries=0, time_limit=300_000, throws=(), periodic=cron("7 * * * *"))
def remind_overdue_bank_transfers() -> None:
    """Every hour: one reminder e-mail per bank transfer overdue `BANK_TRANSFER_DUE_DAYS` after its
    invoice's due date (docs/bank.md)."""
    overdue.remind_overdue(config=current_runtime().config)


@dramatiq.actor(queue_name="billing", max_retries=0, time_limit=300_000, throws=(), periodic=cron("23 6 * * *"))
def list_payouts_waiting_for_money() -> None:
    """Every morning: the payouts waiting for the customer's money, logged for the admins
    (`GET /api/admin/billing/payouts/waiting` lists them; docs/bank.md)."""
    payouts.log_waiting_for_money()


@dramatiq.actor(queue_name="billing", max_retries=8, time_limit=60_000, throws=())
def record_sepa_mandate(signature_request_id: str) -> None:
    """Subscriber of `onboarding.envelope_signed`: the organization's active SEPA mandate."""
    sepa_mandates.record_from_envelope(signature_request_id)


@dramatiq.actor(queue_name="billing", max_retries=8, time_limit=60_000, throws=())
def end_sepa_mandates(organization_id: str) -> None:
    """Subscriber of `organization.iban_changed`: a mandate naming another account ends."""
    sepa_mandates.end_active_mandates(organization_id, reason="iban_changed")


@dramatiq.actor(queue_name="default", max_retries=0, time_limit=120_000, throws=(), periodic=cron("17 * * * *"))
def purge_idempotency_keys() -> None:
    """Idempotency keys are kept 24 h (API.md)."""
    idempotency.purge_expired()


@dramatiq.actor(queue_name="documents", max_retries=0, time_limit=300_000, throws=())
def run_post_invoice_hook(invoice_id: str) -> None:
    """Subscriber of `invoice.issued` (spec C post-invoice hook): the Factur-X PDF stored, then
    the e-invoice transmission draft. The service logs its failures and never raises, so nothing
    is retried here (a missing PDF is made again by `vitrine billing invoice-pdf`);
    it runs on the `documents` queue so PDF rendering never holds collections back."""
    runtime = current_runtime()
    post_invoice.run_post_invoice_hook(invoice_id, storage=runtime.storage, config=runtime.config)


@dramatiq.actor(queue_name="email", max_retries=8, time_limit=60_000, throws=())
def mail_invoice_document(invoice_id: str) -> None:
    """Queued by the post-invoice hook once the PDF is stored: e-mail the document with its
    Factur-X PDF attached to the billing contact, once per document (a redelivery sends nothing)."""
    mailing.mail_document(invoice_id, storage=current_runtime().storage)


from actors.billing import self_billing  # noqa: E402, F401  (declare the self-billing actors)
