"""Admin overrides of the verification policy, per organization and document type.

Specification A: "a manual admin override is allowed and must be traced". An admin (`kyb.review`)
sets the policy of one document type of one organization, with a note; it replaces the default
(the `qualified` onboarding policy, or the per-document default of `verification.default_policy`
for other signature requests) from the next envelope on. Setting and removing are recorded in the
security audit log (`onboarding.verification_policy.overridden`, `...override_removed`), in the
transaction that changes the row.
"""

from __future__ import annotations

from backend import clock
from backend.audit import record_security_event
from backend.db import transaction
from backend.errors import NotFound, ValidationError
from backend.identity.models import Organization
from backend.onboarding.models import VerificationOverride
from backend.onboarding.verification import DocumentType, VerificationPolicy

OVERRIDDEN_EVENT = "onboarding.verification_policy.overridden"
REMOVED_EVENT = "onboarding.verification_policy.override_removed"


def _check(organization_id: str, document_type: str) -> None:
    if document_type not in {t.value for t in DocumentType}:
        raise ValidationError("unknown document type", fields={
            "documentType": [f"must be one of: {', '.join(t.value for t in DocumentType)}"]})
    if not Organization.select().where(Organization.id == organization_id).exists():
        raise NotFound("no such organization")


def set_verification_override(*, organization_id: str, document_type: str, policy: str, note: str,
                              actor_user_id: str) -> VerificationOverride:
    """Set (or replace) the policy of one document type of the organization; audited."""
    _check(organization_id, document_type)
    policy = VerificationPolicy(policy)
    with transaction():
        previous = (VerificationOverride.select(VerificationOverride.policy)
                    .where(VerificationOverride.organization == organization_id,
                           VerificationOverride.document_type == document_type).for_update().first())
        values = {"policy": policy, "note": note, "set_by_user_id": actor_user_id, "set_at": clock.now()}
        VerificationOverride.insert(organization=organization_id, document_type=document_type, **values).on_conflict(
            conflict_target=[VerificationOverride.organization, VerificationOverride.document_type],
            update={getattr(VerificationOverride, name): value for name, value in values.items()},
        ).execute()
        record_security_event(OVERRIDDEN_EVENT, actor_user_id=actor_user_id, target_type="organization",
                              target_id=organization_id,
                              details={"documentType": document_type, "policy": policy.value, "note": note,
                                       "previousPolicy": previous.policy if previous else None})
    return VerificationOverride.get(VerificationOverride.organization == organization_id,
                                    VerificationOverride.document_type == document_type)


def remove_verification_override(*, organization_id: str, document_type: str, actor_user_id: str) -> bool:
    """Go back to the default policy for this document type; False when there was no override."""
    _check(organization_id, document_type)
    with transaction():
        removed = (VerificationOverride.delete()
                   .where(VerificationOverride.organization == organization_id,
                          VerificationOverride.document_type == document_type)
                   .returning(VerificationOverride.policy).execute())
        previous = [row.policy for row in removed]
        if previous:
            record_security_event(REMOVED_EVENT, actor_user_id=actor_user_id, target_type="organization",
                                  target_id=organization_id,
                                  details={"documentType": document_type, "previousPolicy": previous[0]})
    return bool(previous)


def verification_overrides(organization_id: str) -> list[VerificationOverride]:
    """The organization's overrides, by document type."""
    if not Organization.select().where(Organization.id == organization_id).exists():
        raise NotFound("no such organization")
    return list(VerificationOverride.select().where(VerificationOverride.organization == organization_id)
                .order_by(VerificationOverride.document_type))


def overridden_policies(organization_id: str) -> dict[str, VerificationPolicy]:
    return {o.document_type: VerificationPolicy(o.policy) for o in VerificationOverride.select().where(
        VerificationOverride.organization == organization_id)}
