"""KYB review by an admin (`kyb.review`), its approval gate, and the pending approvals list.

Approval gate (Specification A, point 5): the organization's latest envelope must be `signed`;
when its signer is not on the registry extract (as the company registry said, or could not say),
the three delegation documents must be present; a company the registry lists as ceased is never
approved; nor one whose billing identity (legal name, postal address) an invoice could not print
(`identity.billing_identity`). Otherwise 409 `CONFLICT` with `details.reason` `onboarding_not_signed`,
`company_ceased`, `delegation_documents_missing` or `billing_identity_incomplete` (both with
`details.missing`). A rejection is always possible.
"""

from __future__ import annotations

from peewee import JOIN

from backend import clock, company_mentions
from backend.audit import record_security_event
from backend.db import transaction
from backend.errors import Conflict, NotFound
from backend.identity import bank_details, billing_identity
from backend.identity.models import BillingProfile, KybStatus, Organization
from backend.listing import ListParams, Page, paginate
from backend.onboarding.models import KybDocument, KybDocumentType, SignatureRequest
from backend.onboarding.registry import CompanyState
from backend.onboarding.status import ESignStatus

AWAITING_APPROVAL = (KybStatus.SUBMITTED, KybStatus.IN_REVIEW)


PENDING_APPROVAL_SORTS = {"kybSubmittedAt": Organization.kyb_submitted_at, "legalName": Organization.legal_name,
                          "createdAt": Organization.created_at}

def approval_blocker(organization_id: str) -> dict | None:
    """Why the organization cannot be approved yet (`{reason, ...}`), None when it can."""
    envelope = (SignatureRequest.select().where(SignatureRequest.organization == organization_id,
                                                SignatureRequest.status != ESignStatus.INVALIDATED)
                .order_by(SignatureRequest.created_at.desc()).first())
    if envelope is None or envelope.status != ESignStatus.SIGNED:
        return {"reason": "onboarding_not_signed", "onboardingStatus": envelope.status if envelope else None}
    if (envelope.registry_check or {}).get("state") == CompanyState.CEASED:  # an admin refresh found it ceased
        return {"reason": "company_ceased"}
    if not envelope.signer_on_registry_extract:
        present = {d.document_type for d in KybDocument.select(KybDocument.document_type)
                   .where(KybDocument.organization == organization_id)}
        missing = [t.value for t in KybDocumentType if t not in present]
        if missing:
            return {"reason": "delegation_documents_missing", "missing": missing}
    gaps = billing_identity.organization_identity_gaps(organization_id)
    return {"reason": billing_identity.REASON, "missing": gaps} if gaps else None


def review_organization(*, organization_id: str, status: str, note: str | None, actor_user_id: str) -> Organization:
    """Approve or reject the organization's KYB; audited as `kyb.company.reviewed`."""
    with transaction():
        organization = Organization.select().where(Organization.id == organization_id).for_update().first()
        if organization is None:
            raise NotFound("no such organization")
        if status == KybStatus.APPROVED:
            blocker = approval_blocker(organization_id)
            if blocker is not None:
                raise Conflict("the organization cannot be approved yet", **blocker)
        now = clock.now()
        Organization.update(kyb_status=status, kyb_note=note, kyb_reviewed_at=now, updated_at=now).where(
            Organization.id == organization_id).execute()
        if status == KybStatus.APPROVED:  # the account payouts and refunds pay from now on
            bank_details.record_approved(organization_id)
        record_security_event("kyb.company.reviewed", actor_user_id=actor_user_id, target_type="organization",
                              target_id=organization_id,
                              details={"status": status, "note": note, "previousStatus": organization.kyb_status})
    return Organization.get_by_id(organization_id)


def list_pending_approvals(params: ListParams, *, actor_type: str | None = None) -> Page:
    """Organizations whose KYB awaits a decision, with their latest envelope's status and the company
    mentions their billing profile lacks (`company_mentions_missing`)."""
    latest = SignatureRequest.alias("latest")
    newest = SignatureRequest.alias("newest")
    query = (
        Organization.select(Organization, latest.status.alias("onboarding_status"), BillingProfile.legal_form,
                            BillingProfile.share_capital_cents, BillingProfile.registration)
        .join(BillingProfile, JOIN.LEFT_OUTER, on=BillingProfile.organization == Organization.id)
        .switch(Organization)
        .join(latest, JOIN.LEFT_OUTER, on=(
            (latest.organization == Organization.id)
            & (latest.created_at == newest.select(newest.created_at).where(newest.organization == Organization.id)
               .order_by(newest.created_at.desc()).limit(1))))
        .where(Organization.kyb_status.in_(list(AWAITING_APPROVAL)))
        .objects()
    )
    if actor_type:
        query = query.where(Organization.actor_type == actor_type)
    page = paginate(
        query, params,
        sorts=PENDING_APPROVAL_SORTS,
        default_sort="kybSubmittedAt", tiebreaker=Organization.id,
        search_columns=(Organization.legal_name, Organization.siren),
    )
    for organization in page.items:  # the company mentions its invoices would lack (never a gate)
        organization.company_mentions_missing = company_mentions.missing(organization)
    return page
