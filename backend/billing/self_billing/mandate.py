"""The distributor's self-billing mandate (Specification C, article 289 of the French tax code):
request, state, revocation and the signed PDF.

A request runs in three steps, so no database transaction stays open while the e-signature
provider is called:

1. under a lock of the organization row, the guard (409 `CONFLICT` when a mandate is active, or
   another request is still being sent) and a `draft` row;
2. the template rendered and sent to the provider (request, document, signer at level
   `electronic_signature`, activation), the provider's id saved on the draft at once;
3. the draft moved to `pending_signature` with its `esignRequestRef`; the partial unique index
   (one active mandate per organization) is the last word, its refusal is the same 409.

A provider failure leaves nothing live behind: the provider request (when one was created) is
cancelled and the draft marked `abandoned` (kept: no row of the books is deleted), so a retry
starts afresh; the caller gets 502
`ESIGN_PROVIDER_FAILED` and the log scope `billing.self_billing_mandate.request_failed`. A draft
left by a crashed process blocks new requests for `DRAFT_IN_FLIGHT_SECONDS` (longer than the
client's retries can last), then the next request cancels and abandons it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from peewee import IntegrityError

from backend import clock
from backend.billing.documents.stored_pdf import verified_document
from backend.billing.errors import BillingPdfNotReady, EsignProviderFailed
from backend.billing.models import (
    ACTIVE_SELF_BILLING_MANDATE,
    AuditEntry,
    SelfBillingMandate,
    SelfBillingMandateStatus,
)
from backend.billing.self_billing.mandate_document import STORAGE_CONTEXT, render_mandate
from backend.config import Config
from backend.context import current_request_id
from backend.db import transaction
from backend.errors import Conflict, Forbidden, NotFound, ValidationError
from backend.identity.french_ids import to_e164
from backend.identity.models import ActorType, Membership
from backend.identity.organizations import billing_profile_of, organization_for
from backend.identity.permissions import MEMBERSHIP_ROLES
from backend.identity.principal import Principal
from backend.logs import log_event
from backend.onboarding.provider import ProviderError, SignatureProvider, SignerInfo
from backend.onboarding.verification import VerificationPolicy, verification_for
from storage import Storage

SCOPE = "billing.self_billing_mandate"
# Spec C: the default signature level; the `none` policy of spec A gives it, with an e-mail OTP.
VERIFICATION = verification_for(VerificationPolicy.NONE)
DRAFT_IN_FLIGHT_SECONDS = 15 * 60
REVOKED_ACTION = "self_billing_mandate.revoked"
Status = SelfBillingMandateStatus


@dataclass(frozen=True)
class RequestedMandate:
    mandate: SelfBillingMandate
    signature_link: str | None


def latest_mandate(organization_id: str) -> SelfBillingMandate | None:
    """The organization's latest mandate, an abandoned draft aside."""
    return (SelfBillingMandate.select().where(SelfBillingMandate.organization_id == organization_id,
                                              SelfBillingMandate.status != Status.ABANDONED)
            .order_by(SelfBillingMandate.created_at.desc(), SelfBillingMandate.id.desc()).first())


def mandate_of(*, principal: Principal, organization_id: str) -> SelfBillingMandate:
    """The organization's current (latest) mandate, for an admin or a member; 404 without one."""
    organization = organization_for(principal, organization_id)
    mandate = latest_mandate(organization.id)
    if mandate is None:
        raise NotFound("the organization has no self-billing mandate")
    return mandate


# --- request ---------------------------------------------------------------------------------


def request_mandate(*, principal: Principal, organization_id: str, provider: SignatureProvider,
                    storage: Storage, config: Config) -> RequestedMandate:
    """Render the mandate, send it for signature and answer the `pending_signature` mandate."""
    draft = _reserve_draft(principal, organization_id, provider)
    pid, link = None, None
    try:
        pid, link = _send(draft, provider, storage, config)
    except Exception as exc:
        _abandon(draft, provider, pid or _saved_ref(draft.id), reason=f"{type(exc).__name__}: {exc}")
        if isinstance(exc, ProviderError):
            raise EsignProviderFailed(f"the e-signature provider failed: {exc}", organizationId=organization_id,
                                      providerStatus=exc.status) from None
        raise
    try:
        with transaction():
            moved = (SelfBillingMandate.update(status=Status.PENDING_SIGNATURE, requested_at=clock.now(),
                                               updated_at=clock.now())
                     .where(SelfBillingMandate.id == draft.id, SelfBillingMandate.status == Status.DRAFT)
                     .execute())
    except IntegrityError:  # the one-active-mandate index: the last word on the guard
        moved = 0
    if not moved:
        _abandon(draft, provider, pid, reason="another mandate of the organization became active")
        raise Conflict("the organization already has an active self-billing mandate", reason="mandate_active")
    mandate = SelfBillingMandate.get_by_id(draft.id)
    log_event(f"{SCOPE}.requested", "self-billing mandate sent for signature", organizationId=organization_id,
              mandateId=mandate.id, esignRequestRef=pid, signatureLevel=mandate.signature_level)
    return RequestedMandate(mandate, link)


def _reserve_draft(principal: Principal, organization_id: str, provider: SignatureProvider) -> SelfBillingMandate:
    """Step 1: the guard and the draft, in one transaction under the organization's row lock
    (two concurrent requests: the second waits, then finds the first one's draft)."""
    stale: list[SelfBillingMandate] = []
    with transaction():
        organization = organization_for(principal, organization_id, for_update=True)
        if organization.actor_type != ActorType.DISTRIBUTOR:
            raise Conflict("only a distributor organization gives a self-billing mandate", reason="not_a_distributor")
        profile = billing_profile_of(organization.id)
        if profile is None:
            raise Conflict("the organization has no billing profile (its signer) yet", reason="billing_profile_missing")
        active = (SelfBillingMandate.select().where(SelfBillingMandate.organization_id == organization.id,
                                                    SelfBillingMandate.status.in_(list(ACTIVE_SELF_BILLING_MANDATE)))
                  .first())
        if active is not None:
            raise Conflict("the organization already has an active self-billing mandate", reason="mandate_active",
                           mandateId=active.id, status=active.status)
        since = clock.now() - timedelta(seconds=DRAFT_IN_FLIGHT_SECONDS)
        for draft in SelfBillingMandate.select().where(SelfBillingMandate.organization_id == organization.id,
                                                       SelfBillingMandate.status == Status.DRAFT):
            if draft.created_at > since:
                raise Conflict("a self-billing mandate request is being sent", reason="mandate_request_in_progress",
                               mandateId=draft.id)
            stale.append(draft)
        _mark_abandoned([d.id for d in stale])
        mandate = SelfBillingMandate.create(
            organization_id=organization.id, status=Status.DRAFT, signature_level=VERIFICATION.signature_level.value,
            signer={"firstName": profile.signer_first_name, "lastName": profile.signer_last_name,
                    "email": profile.signer_email, "phone": profile.signer_phone},
            requested_by_user_id=principal.user_id,
        )
    for draft in stale:  # a crashed request's provider request must not be signable any more
        _cancel_quietly(provider, draft.esign_request_ref, draft.id)
    return mandate


def _send(draft: SelfBillingMandate, provider: SignatureProvider, storage: Storage,
          config: Config) -> tuple[str, str | None]:
    """Step 2, outside any transaction: render, create, upload, add the signer, activate."""
    signer = draft.signer
    pdf = render_mandate(draft.organization_id, signer=signer, storage=storage, config=config,
                         today=clock.now().date())
    pid = provider.create_request(name="Mandat d'autofacturation", external_id=draft.id, delivery_mode="email",
                                  ordered_signers=True, locale="fr")
    with transaction():  # saved at once: a later failure cancels it, events find the draft
        SelfBillingMandate.update(esign_request_ref=pid, updated_at=clock.now()).where(
            SelfBillingMandate.id == draft.id).execute()
    document_id = provider.upload_document(pid, filename="mandat-autofacturation.pdf", content=pdf)
    provider.add_signer(
        pid, signer=SignerInfo(signer["firstName"], signer["lastName"], signer["email"],
                               to_e164(signer["phone"]) if signer.get("phone") else None),
        signature_level=VERIFICATION.signature_level.value,
        authentication_mode=VERIFICATION.authentication_mode.value, document_ids=[document_id])
    return pid, provider.activate(pid).signature_link


def _saved_ref(mandate_id: str) -> str | None:
    row = SelfBillingMandate.get_or_none(SelfBillingMandate.id == mandate_id)
    return row.esign_request_ref if row else None


def _abandon(draft: SelfBillingMandate, provider: SignatureProvider, pid: str | None, *, reason: str) -> None:
    """Nothing half-written: the provider request cancelled (best effort), the draft abandoned."""
    _cancel_quietly(provider, pid, draft.id)
    with transaction():
        _mark_abandoned([draft.id])
    log_event(f"{SCOPE}.request_failed", "self-billing mandate request failed", "error",
              organizationId=draft.organization_id, mandateId=draft.id, esignRequestRef=pid, error=reason[:500])


def _mark_abandoned(draft_ids: list[str]) -> None:
    """Drafts of failed requests marked, not deleted: the runtime role deletes no billing row."""
    now = clock.now()
    (SelfBillingMandate.update({SelfBillingMandate.status: Status.ABANDONED, SelfBillingMandate.abandoned_at: now,
                                SelfBillingMandate.updated_at: now})
     .where(SelfBillingMandate.id.in_(draft_ids), SelfBillingMandate.status == Status.DRAFT).execute())


def _cancel_quietly(provider: SignatureProvider, pid: str | None, mandate_id: str) -> None:
    if pid is None:
        return
    try:
        provider.cancel(pid)
    except Exception as exc:  # a draft request the provider never activated expires on its own
        log_event(f"{SCOPE}.request_failed", "provider request of an abandoned mandate not cancelled", "warn",
                  mandateId=mandate_id, esignRequestRef=pid, error=f"{type(exc).__name__}: {exc}"[:500])


# --- revocation ------------------------------------------------------------------------------


def revoke_mandate(*, principal: Principal, organization_id: str, reason: str) -> SelfBillingMandate:
    """`signed` to `revoked` (an admin, a reason), with a billing audit entry; 409 when the
    organization has no signed mandate."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError("a reason is required", fields={"reason": ["required"]})
    with transaction():
        organization = organization_for(principal, organization_id)
        mandate = (SelfBillingMandate.select()
                   .where(SelfBillingMandate.organization_id == organization.id,
                          SelfBillingMandate.status == Status.SIGNED)
                   .for_update().first())
        if mandate is None:
            raise Conflict("the organization has no signed self-billing mandate", reason="no_signed_mandate")
        now = clock.now()
        SelfBillingMandate.update(status=Status.REVOKED, revoked_at=now, revoked_by_user_id=principal.user_id,
                                  revoke_reason=reason, updated_at=now).where(
            SelfBillingMandate.id == mandate.id).execute()
        AuditEntry.create(action=REVOKED_ACTION, actor_user_id=principal.user_id, reason=reason,
                          details={"organizationId": organization.id, "mandateId": mandate.id},
                          request_id=current_request_id())
    log_event(f"{SCOPE}.revoked", "self-billing mandate revoked", organizationId=organization.id,
              mandateId=mandate.id, userId=principal.user_id)
    return SelfBillingMandate.get_by_id(mandate.id)


# --- the PDF ---------------------------------------------------------------------------------


def open_document(*, principal: Principal, organization_id: str, storage: Storage) -> tuple[str, bytes]:
    """`(filename, bytes)` of the current mandate's signed PDF, for an admin or a member of the
    organization (any membership role), else 403; 404 without mandate; 404
    `BILLING_PDF_NOT_READY` until the signed PDF is stored; 409 `DOCUMENT_INTEGRITY_FAILED` when
    the stored file is not the one signed (sha256 recorded at signature)."""
    if not principal.is_admin and not Membership.select().where(
            Membership.user == principal.user_id, Membership.organization == organization_id,
            Membership.role.in_(sorted(MEMBERSHIP_ROLES))).exists():
        raise Forbidden("only an admin or a member of the organization may download its mandate")
    mandate = latest_mandate(organization_id)
    if mandate is None:
        raise NotFound("the organization has no self-billing mandate")
    key = mandate.document_storage_key
    if key is None or not storage.exists(STORAGE_CONTEXT, key):
        raise BillingPdfNotReady("the signed mandate PDF is not stored yet", status=mandate.status)
    pdf = verified_document(storage, STORAGE_CONTEXT, key, mandate.document_sha256, user_id=principal.user_id,
                            mandateId=mandate.id)
    return f"mandat-autofacturation-{mandate.id}.pdf", pdf


# --- the answer ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PublicMandate:
    """What a member of the organization sees of its mandate: statuses and dates."""

    status: str
    document_available: bool
    created_at: datetime
    requested_at: datetime | None
    signed_at: datetime | None
    declined_at: datetime | None
    revoked_at: datetime | None


def mandate_view(mandate: SelfBillingMandate, *, full: bool) -> SelfBillingMandate | PublicMandate:
    """The mandate as the caller may see it: the whole row for admins (`full`: the provider
    reference, the storage key, the signer and the reasons too), its statuses and dates otherwise."""
    if full:
        return mandate
    return PublicMandate(mandate.status, mandate.document_available, mandate.created_at, mandate.requested_at,
                         mandate.signed_at, mandate.declined_at, mandate.revoked_at)
