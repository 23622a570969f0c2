"""Supervision of onboarding envelopes by admins: the server-paginated list, relaunch of pending
or failed envelopes, and the reset of an organization's onboarding journey.

A relaunch never revives an envelope: it cancels it at the provider when its request may still be
live there (pending, or `error`), marks it `canceled` (reason `relaunched`) and opens a new one for
the same organization, copying the delegator, and reading the signer from the billing profile and
the verification overrides again.
"""

from __future__ import annotations

from datetime import timedelta

from backend import clock
from backend.audit import record_security_event
from backend.db import transaction
from backend.errors import Conflict, NotFound
from backend.identity.models import Organization
from backend.listing import ListParams, Page, paginate
from backend.logs import get_logger
from backend.onboarding.envelopes import latest_envelope, open_envelope, signable_profile
from backend.onboarding.events import apply_status
from backend.onboarding.models import SignatureRequest
from backend.onboarding.provider import ProviderError, SignatureProvider
from backend.onboarding.registry_check import RegistryDecision
from backend.onboarding.status import PENDING, ESignStatus
from backend.onboarding.superseding import LIVE_AT_PROVIDER, cancel_at_provider, mark_cancel_due

log = get_logger("onboarding")

RELAUNCH_DEFAULT_STATUSES = (ESignStatus.ERROR, ESignStatus.EXPIRED)
STALE_PENDING = timedelta(days=7)
RELAUNCHABLE = frozenset({ESignStatus.ERROR, ESignStatus.EXPIRED, ESignStatus.DECLINED, ESignStatus.CANCELED,
                          *PENDING})


SIGNATURE_REQUEST_SORTS = {"createdAt": SignatureRequest.created_at,
                           "statusChangedAt": SignatureRequest.status_changed_at,
                           "status": SignatureRequest.status, "organizationName": Organization.legal_name}

def list_signature_requests(params: ListParams, *, status: str | None = None,
                            organization_id: str | None = None) -> Page:
    query = (SignatureRequest.select(SignatureRequest, Organization.legal_name.alias("organization_name"))
             .join(Organization).objects())
    if status:
        query = query.where(SignatureRequest.status == status)
    if organization_id:
        query = query.where(SignatureRequest.organization == organization_id)
    return paginate(
        query, params,
        sorts=SIGNATURE_REQUEST_SORTS,
        default_sort="createdAt", tiebreaker=SignatureRequest.id,
        search_columns=(Organization.legal_name, Organization.id, SignatureRequest.provider_signature_request_id),
    )


def relaunch_envelopes(*, signature_request_ids: list[str] | None, statuses: list[str] | None,
                       actor_user_id: str, provider: SignatureProvider) -> dict:
    """Replace pending or failed envelopes by new ones: `{relaunched, skipped, failed}`.

    Default selection: envelopes in `error` or `expired`, and envelopes pending for more than
    7 days. Only an organization's latest envelope is relaunched (older ones are `superseded`)."""
    query = SignatureRequest.select()
    if signature_request_ids:
        query = query.where(SignatureRequest.id.in_(signature_request_ids))
    elif statuses:
        query = query.where(SignatureRequest.status.in_(statuses))
    else:
        stale = clock.now() - STALE_PENDING
        query = query.where(SignatureRequest.status.in_(list(RELAUNCH_DEFAULT_STATUSES))
                            | (SignatureRequest.status.in_(list(PENDING)) & (SignatureRequest.created_at < stale)))
    result: dict[str, list] = {"relaunched": [], "skipped": [], "failed": []}
    for envelope in query.order_by(SignatureRequest.created_at):
        if envelope.status not in RELAUNCHABLE:
            result["skipped"].append({"id": envelope.id, "reason": f"status_{envelope.status}"})
        elif latest_envelope(envelope.organization_id).id != envelope.id:
            result["skipped"].append({"id": envelope.id, "reason": "superseded"})
        else:
            try:
                new = _relaunch(envelope, actor_user_id=actor_user_id, provider=provider)
            except (Conflict, ProviderError) as exc:
                result["failed"].append({"id": envelope.id, "reason": str(exc)})
                continue
            result["relaunched"].append({"id": envelope.id, "newSignatureRequestId": new.id})
    return result


def _cancel_at_provider(envelope: SignatureRequest, provider: SignatureProvider) -> None:
    if envelope.provider_signature_request_id and envelope.status in LIVE_AT_PROVIDER:
        cancel_at_provider(envelope.provider_signature_request_id, provider)


def _relaunch(envelope: SignatureRequest, *, actor_user_id: str, provider: SignatureProvider) -> SignatureRequest:
    organization = Organization.get_by_id(envelope.organization_id)
    profile = signable_profile(organization.id)  # before the cancel: a relaunch that cannot happen changes nothing
    _cancel_at_provider(envelope, provider)
    with transaction():
        locked = SignatureRequest.select().where(SignatureRequest.id == envelope.id).for_update().first()
        if locked.status in LIVE_AT_PROVIDER:
            apply_status(locked, ESignStatus.CANCELED, reason="relaunched")
        new = open_envelope(organization, profile, RegistryDecision.of_envelope(envelope), delegator=envelope.delegator,
                            created_by_user_id=actor_user_id)
        record_security_event("onboarding.signature_request.relaunched", actor_user_id=actor_user_id,
                              target_type="organization", target_id=organization.id,
                              details={"previousSignatureRequestId": envelope.id, "signatureRequestId": new.id})
    return new


def reset_onboarding(*, organization_id: str, actor_user_id: str, provider: SignatureProvider) -> dict:
    """Invalidate every envelope of the organization and clear its KYB status (operational use)."""
    organization = Organization.get_or_none(Organization.id == organization_id)
    if organization is None:
        raise NotFound("no such organization")
    envelopes = list(SignatureRequest.select().where(SignatureRequest.organization == organization_id,
                                                     SignatureRequest.status != ESignStatus.INVALIDATED))
    owed = set()
    for envelope in envelopes:
        try:
            _cancel_at_provider(envelope, provider)
        except ProviderError as exc:  # invalidated here whatever the provider says; the cancel stays owed
            owed.add(envelope.id)
            log.warning("provider cancel failed during reset", extra={"fields": {
                "signatureRequestId": envelope.id, "error": str(exc)}})
    with transaction():
        locked = (SignatureRequest.select().where(SignatureRequest.id.in_([e.id for e in envelopes]))
                  .order_by(SignatureRequest.id).for_update())
        for envelope in locked:
            apply_status(envelope, ESignStatus.INVALIDATED, reason="onboarding reset by an admin")
            if envelope.id in owed:
                mark_cancel_due(envelope.id)
        Organization.update(kyb_status=None, kyb_note=None, kyb_reviewed_at=None, updated_at=clock.now()).where(
            Organization.id == organization_id).execute()
        record_security_event("onboarding.reset", actor_user_id=actor_user_id, target_type="organization",
                              target_id=organization_id,
                              details={"invalidated": [e.id for e in envelopes],
                                       "previousKybStatus": organization.kyb_status})
    return {"organizationId": organization_id, "invalidated": len(envelopes), "kybStatus": None}
