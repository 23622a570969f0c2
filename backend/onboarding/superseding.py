"""Envelopes replaced by a newer one, and the provider requests they leave behind.

An organization has one live envelope. When a new one replaces it (a manager's new start after an
`error`, an admin relaunch or reset), the old envelope becomes terminal here at once (`canceled`
with reason `superseded` or `relaunched`, or `invalidated`), so no later provider event can move it
again, and its provider request is cancelled: a signer never has two live requests.

The cancel is a provider call, made outside the database transaction. When it cannot be made at
once, `provider_cancel_due` records that it is still owed; the next creation of an envelope of the
organization and every reconciliation pass make it (`cancel_due_requests`). A request the provider
already holds as terminal (signed, declined, expired, cancelled) needs no cancel.
"""

from __future__ import annotations

from backend import clock
from backend.logs import get_logger
from backend.onboarding.events import apply_status
from backend.onboarding.models import SignatureRequest
from backend.onboarding.provider import ProviderError, ProviderRejected, SignatureProvider
from backend.onboarding.status import PENDING, TERMINAL, ESignStatus, from_provider_status

log = get_logger("onboarding")

# Local statuses whose provider request may still be live (an `error` may be a signer error on
# a request that is still open at the provider).
LIVE_AT_PROVIDER = PENDING | {ESignStatus.ERROR}


def supersede_errored(organization_id: str) -> list[str]:
    """Inside the caller's transaction: every `error` envelope of the organization becomes
    `canceled` (reason `superseded`), its provider cancel owed. Returns their ids."""
    errored = list(SignatureRequest.select().where(SignatureRequest.organization == organization_id,
                                                   SignatureRequest.status == ESignStatus.ERROR)
                   .order_by(SignatureRequest.id).for_update())
    for envelope in errored:
        apply_status(envelope, ESignStatus.CANCELED, reason="superseded")
        if envelope.provider_signature_request_id:
            mark_cancel_due(envelope.id)
    return [e.id for e in errored]


def mark_cancel_due(request_id: str, due: bool = True) -> None:
    SignatureRequest.update(provider_cancel_due=due, updated_at=clock.now()).where(
        SignatureRequest.id == request_id).execute()


def cancel_at_provider(pid: str, provider: SignatureProvider) -> None:
    """Cancel the provider request; a request already terminal there needs nothing (no error)."""
    try:
        provider.cancel(pid)
    except ProviderRejected:
        if from_provider_status(provider.get_request(pid).status) not in TERMINAL:
            raise


def cancel_due_requests(provider: SignatureProvider, *, organization_id: str | None = None,
                        limit: int = 200) -> dict:
    """Make the provider cancels still owed (of one organization, or of all): `{cancelled, failed}`."""
    query = SignatureRequest.select().where(SignatureRequest.provider_cancel_due)
    if organization_id is not None:
        query = query.where(SignatureRequest.organization == organization_id)
    counts = {"cancelled": 0, "failed": 0}
    for envelope in query.order_by(SignatureRequest.updated_at).limit(limit):
        try:
            cancel_at_provider(envelope.provider_signature_request_id, provider)
        except ProviderError as exc:
            counts["failed"] += 1
            log.warning("provider cancel of a superseded envelope failed", extra={"fields": {
                "signatureRequestId": envelope.id, "error": str(exc)}})
            continue
        mark_cancel_due(envelope.id, False)
        counts["cancelled"] += 1
    return counts
