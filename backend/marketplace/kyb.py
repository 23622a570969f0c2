"""KYB gating of the marketplace (Specification A, "Organization gating"): no reservation, and no
published ad space, until the organization's KYB is `approved`."""

from __future__ import annotations

from backend.errors import Forbidden
from backend.identity.models import KybStatus, Organization


def require_kyb_approved(organization_id: str) -> Organization:
    """The organization, or 403 with `details.reason = "kyb_not_approved"`.

    Called inside the caller's transaction: the share lock keeps a KYB review from committing
    between this check and the caller's writes."""
    organization = Organization.select().where(Organization.id == organization_id).for_update("FOR SHARE").first()
    check_kyb_approved(organization.kyb_status if organization else None)
    return organization


def check_kyb_approved(kyb_status: str | None) -> None:
    """403 `kyb_not_approved` unless `kyb_status` (None: no organization) is `approved`: for a
    caller that read the organization, share-locked, with the rest of what it needs."""
    if kyb_status != KybStatus.APPROVED:
        raise Forbidden("the organization's KYB is not approved", reason="kyb_not_approved")
