"""Provider events of self-billing mandates (Specification C): the routing of every processed
provider event to its mandate, and the application of an event to its mandate.

There is no second webhook route: `handle_signature_event` is what the actor
`route_self_billing_mandate_event` runs, the subscriber of `onboarding.signature_event_processed`
(`backend.events`), once the onboarding processing of the stored event has committed. In one
transaction it matches the mandate by `esignRequestRef` and, when the event may move it, queues
`apply_self_billing_mandate_event`. It never throws: a failure is logged
`billing.self_billing_mandate.webhook_apply_failed` and rolled back, the event's onboarding
processing stands.

`apply_provider_event` (the actor, outside any transaction while it calls the provider):

| provider event | mandate |
|---|---|
| `signature_request.done` | `signed` (see below) |
| `signer.declined`, `signature_request.declined` | `declined` |
| `signature_request.expired`, `signature_request.canceled` | `declined` |
| `signer.error`, `signer.notification_delivery_failed` | `declined` |
| any other | nothing |

`signed` only once the provider confirms the request `done`; its signed PDF is downloaded,
checked (PDF, 5 MB max) and stored in `billing-self-billing-mandate` first.

An event on a mandate not `pending_signature` is ignored (`webhook_ignored`); `done` on a
`signed` mandate is a no-op. A signed file that is not a PDF or is over 5 MB cannot evidence the
mandate: it is declined (`signed_document_invalid`) and logged `webhook_apply_failed`, so the
admin can request a new one.

`reconcile_pending` (every 15 minutes) repairs lost webhooks: a mandate pending with no change for
`ESIGN_RECONCILE_AFTER_SECONDS` is asked of the provider, and a final provider status is applied
as its event would be (`updated_at` is bumped when asked, so the pass walks every pending mandate).
"""

from __future__ import annotations

import hashlib
from datetime import timedelta

from backend import clock, outbox
from backend.billing.models import SelfBillingMandate, SelfBillingMandateStatus
from backend.billing.self_billing.mandate import SCOPE
from backend.billing.self_billing.mandate_document import STORAGE_CONTEXT, pdf_problem, storage_key
from backend.db import transaction
from backend.logs import log_event
from backend.onboarding.models import SignatureEvent
from backend.onboarding.provider import ProviderError, SignatureProvider
from storage import Storage

APPLY_ACTOR = "apply_self_billing_mandate_event"
Status = SelfBillingMandateStatus

EVENT_TARGETS: dict[str, Status] = {
    "signature_request.done": Status.SIGNED,
    "signer.declined": Status.DECLINED,
    "signature_request.declined": Status.DECLINED,
    "signature_request.expired": Status.DECLINED,
    "signature_request.canceled": Status.DECLINED,
    "signer.error": Status.DECLINED,
    "signer.notification_delivery_failed": Status.DECLINED,
}

# A final provider status read by reconciliation, and the event it stands for.
STATUS_EVENTS = {"done": "signature_request.done", "declined": "signature_request.declined",
                 "expired": "signature_request.expired", "canceled": "signature_request.canceled",
                 "rejected": "signature_request.canceled"}


def handle_signature_event(event_id: str) -> None:
    """Route the stored provider event `event_id` to its mandate (never throws)."""
    received = SignatureEvent.get_or_none(SignatureEvent.event_id == event_id)
    if received is None:
        return
    try:
        with transaction():
            route_event(received)
    except Exception as exc:
        log_event(f"{SCOPE}.webhook_apply_failed", "self-billing mandate event not applied", "error",
                  eventId=received.event_id, eventName=received.event_name,
                  esignRequestRef=received.provider_signature_request_id, error=f"{type(exc).__name__}: {exc}"[:500])


def route_event(received: SignatureEvent) -> str | None:
    """Queue the event for its mandate when it may move it; returns the mandate id queued."""
    target = EVENT_TARGETS.get(received.event_name)
    pid = received.provider_signature_request_id
    if target is None or not pid:
        return None
    mandate = SelfBillingMandate.get_or_none(SelfBillingMandate.esign_request_ref == pid)
    if mandate is None:
        return None  # an onboarding envelope's event, or a request of an abandoned mandate
    if not _movable(mandate, target, received.event_id, received.event_name):
        return None
    outbox.enqueue(APPLY_ACTOR, mandate.id, received.event_id, received.event_name)
    return mandate.id


def _movable(mandate: SelfBillingMandate, target: Status, event_id: str, event_name: str) -> bool:
    if mandate.status == Status.PENDING_SIGNATURE:
        return True
    if not (mandate.status == Status.SIGNED and target == Status.SIGNED):  # `done` again: a no-op
        log_event(f"{SCOPE}.webhook_ignored", "event on a mandate not pending signature ignored",
                  organizationId=mandate.organization_id, mandateId=mandate.id, status=mandate.status,
                  eventId=event_id, eventName=event_name)
    return False


def apply_provider_event(mandate_id: str, event_id: str, event_name: str, *, provider: SignatureProvider,
                         storage: Storage) -> str | None:
    """Apply a queued event; returns the mandate's new status, None when nothing moved. Provider
    failures raise (the actor retries); running it twice is harmless."""
    mandate = SelfBillingMandate.get_or_none(SelfBillingMandate.id == mandate_id)
    target = EVENT_TARGETS.get(event_name)
    if mandate is None or target is None or not _movable(mandate, target, event_id, event_name):
        return None
    if target == Status.DECLINED:
        return _decline(mandate_id, event_id, reason=event_name)
    remote = provider.get_request(mandate.esign_request_ref)  # a webhook body never proves a final state
    if remote.status != "done" or not remote.document_ids:
        log_event(f"{SCOPE}.webhook_ignored", "`done` not confirmed by the provider", "warn",
                  mandateId=mandate.id, eventId=event_id, providerStatus=remote.status)
        return None
    content = provider.download_document(mandate.esign_request_ref, remote.document_ids[0])
    problem = pdf_problem(content)
    if problem is not None:
        log_event(f"{SCOPE}.webhook_apply_failed", "signed mandate file refused", "error", mandateId=mandate.id,
                  eventId=event_id, eventName=event_name, error=problem)
        return _decline(mandate_id, event_id, reason=f"signed_document_invalid: {problem}")
    key = storage_key(mandate.organization_id, mandate.id)
    storage.put_bytes(STORAGE_CONTEXT, key, content, "application/pdf")  # the blob before the row
    with transaction():
        locked = _locked_pending(mandate_id)
        if locked is None:
            return None
        now = clock.now()
        SelfBillingMandate.update(status=Status.SIGNED, signed_at=now, document_storage_key=key,
                                  document_sha256=hashlib.sha256(content).hexdigest(),
                                  updated_at=now).where(SelfBillingMandate.id == mandate_id).execute()
    log_event(f"{SCOPE}.signed", "self-billing mandate signed", organizationId=mandate.organization_id,
              mandateId=mandate.id, eventId=event_id, documentBytes=len(content))
    return Status.SIGNED


def _decline(mandate_id: str, event_id: str, *, reason: str) -> str | None:
    with transaction():
        locked = _locked_pending(mandate_id)
        if locked is None:
            return None
        now = clock.now()
        SelfBillingMandate.update(status=Status.DECLINED, declined_at=now, decline_reason=reason[:1000],
                                  updated_at=now).where(SelfBillingMandate.id == mandate_id).execute()
    log_event(f"{SCOPE}.declined", "self-billing mandate declined", organizationId=locked.organization_id,
              mandateId=mandate_id, eventId=event_id, reason=reason[:200])
    return Status.DECLINED


def _locked_pending(mandate_id: str) -> SelfBillingMandate | None:
    """The mandate locked, when it is still `pending_signature` (a concurrent event moved it otherwise)."""
    return (SelfBillingMandate.select()
            .where(SelfBillingMandate.id == mandate_id, SelfBillingMandate.status == Status.PENDING_SIGNATURE)
            .for_update().first())


def reconcile_pending(*, older_than_seconds: int, provider: SignatureProvider, storage: Storage,
                      limit: int = 200) -> dict:
    """Ask the provider about mandates pending with no change for `older_than_seconds`;
    `{checked, moved, failed}`. A provider failure counts as failed and the pass goes on."""
    cutoff = clock.now() - timedelta(seconds=older_than_seconds)
    candidates = list(SelfBillingMandate.select(SelfBillingMandate.id, SelfBillingMandate.esign_request_ref)
                      .where(SelfBillingMandate.status == Status.PENDING_SIGNATURE,
                             SelfBillingMandate.updated_at < cutoff)
                      .order_by(SelfBillingMandate.updated_at).limit(limit))
    counts = {"checked": 0, "moved": 0, "failed": 0}
    for candidate in candidates:
        counts["checked"] += 1
        try:
            remote = provider.get_request(candidate.esign_request_ref)
            event = STATUS_EVENTS.get(remote.status)
            moved = event is not None and apply_provider_event(
                candidate.id, f"reconciliation:{remote.status}", event, provider=provider, storage=storage)
        except ProviderError as exc:
            counts["failed"] += 1
            log_event(f"{SCOPE}.webhook_apply_failed", "mandate reconciliation failed", "warn",
                      mandateId=candidate.id, error=str(exc)[:500])
            continue
        if moved:
            counts["moved"] += 1
        else:  # asked: the next passes ask the others first
            SelfBillingMandate.update(updated_at=clock.now()).where(
                SelfBillingMandate.id == candidate.id, SelfBillingMandate.status == Status.PENDING_SIGNATURE).execute()
    if candidates:
        log_event(f"{SCOPE}.reconciled", "self-billing mandate reconciliation pass", **counts)
    return counts
