"""Reconciliation: ask the provider for the status of envelopes whose webhooks may be lost.

On demand (`GET /api/organizations/{id}/onboarding?reconcile=true`, spec A
`allowExternalReconciliation`) for one envelope, and on a schedule for every envelope pending
without a move for `ESIGN_RECONCILE_AFTER_SECONDS` (one hour by default). The provider's status
is normalized and applied with the same rules as events (`status.next_status`): it is the
provider's current word, so it counts as the newest; a terminal status never moves.
`pending_creation` envelopes belong to the creation actor and are left alone.

Envelopes in `error` with a provider request are asked too (the request may have moved on: a
signer error, then a signature): only a terminal provider status applies to them (a request still
`ongoing` at the provider leaves the error as it is). Each envelope is asked at most once per
period (`reconciled_at`), oldest first, so old errors never starve the others. Each pass also
makes the provider cancels still owed for superseded envelopes (`superseding.cancel_due_requests`).
"""

from __future__ import annotations

from datetime import timedelta

from peewee import fn

from backend import clock
from backend.db import transaction
from backend.logs import get_logger
from backend.onboarding.events import apply_status
from backend.onboarding.models import SignatureRequest
from backend.onboarding.provider import ProviderError, SignatureProvider
from backend.onboarding.status import PENDING, TERMINAL, ESignStatus, from_provider_status, next_status
from backend.onboarding.superseding import cancel_due_requests

log = get_logger("esign.reconciliation")
RECONCILED = (PENDING - {ESignStatus.PENDING_CREATION}) | {ESignStatus.ERROR}


def reconcile_envelope(request_id: str, *, provider: SignatureProvider) -> str | None:
    """Bring one envelope to the provider's status; returns its status afterwards."""
    request = SignatureRequest.get_or_none(SignatureRequest.id == request_id)
    if request is None:
        return None
    pid = request.provider_signature_request_id
    if pid is None or request.status in TERMINAL or request.status == ESignStatus.PENDING_CREATION:
        return request.status
    remote = provider.get_request(pid)
    with transaction():
        locked = SignatureRequest.select().where(SignatureRequest.id == request_id).for_update().first()
        if remote.signature_link and remote.signature_link != locked.signature_link:
            SignatureRequest.update(signature_link=remote.signature_link).where(
                SignatureRequest.id == request_id).execute()
        SignatureRequest.update(reconciled_at=clock.now()).where(SignatureRequest.id == request_id).execute()
        target = from_provider_status(remote.status)
        if locked.status == ESignStatus.ERROR and target not in TERMINAL:
            target = None  # only a request that ended at the provider moves an envelope out of error
        moved = next_status(locked.status, target)
        if moved is not None:
            apply_status(locked, moved)
            log.info("envelope reconciled", extra={"fields": {
                "signatureRequestId": request_id, "from": locked.status, "to": moved, "providerStatus": remote.status}})
    return moved or locked.status


def reconcile_pending(*, older_than_seconds: int, provider: SignatureProvider, limit: int = 200) -> dict:
    """Reconcile envelopes pending with no move for `older_than_seconds`; `{checked, moved, failed}`."""
    cutoff = clock.now() - timedelta(seconds=older_than_seconds)
    cancel_due_requests(provider, limit=limit)
    last_asked = fn.COALESCE(SignatureRequest.reconciled_at, SignatureRequest.status_changed_at)
    candidates = list(
        SignatureRequest.select(SignatureRequest.id, SignatureRequest.status)
        .where(SignatureRequest.status.in_(list(RECONCILED)), SignatureRequest.status_changed_at < cutoff,
               (SignatureRequest.reconciled_at.is_null() | (SignatureRequest.reconciled_at < cutoff)),
               SignatureRequest.provider_signature_request_id.is_null(False))
        .order_by(last_asked)
        .limit(limit)
    )
    counts = {"checked": 0, "moved": 0, "failed": 0}
    for candidate in candidates:
        counts["checked"] += 1
        try:
            status = reconcile_envelope(candidate.id, provider=provider)
        except ProviderError as exc:
            counts["failed"] += 1
            log.warning("envelope reconciliation failed", extra={"fields": {
                "signatureRequestId": candidate.id, "error": str(exc)}})
            continue
        counts["moved"] += status != candidate.status
    if candidates:
        log.info("reconciliation pass", extra={"fields": counts})
    return counts
