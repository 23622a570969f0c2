"""Who receives an organization's billing mail (its documents, a contest's answer, an overdue
transfer's reminder): one rule for all of them (docs/self-billing.md "Documents by e-mail, acceptance and contest")."""

from __future__ import annotations

from backend.identity.models import BillingProfile, Membership, User
from backend.identity.permissions import MembershipRole


def billing_recipients(organization_id: str) -> list[str]:
    """The organization's billing e-mail, else its managers' addresses (sorted, distinct)."""
    profile = BillingProfile.get_or_none(BillingProfile.organization == organization_id)
    if profile is not None and profile.billing_email:
        return [profile.billing_email]
    managers = (User.select(User.email).join(Membership, on=Membership.user == User.id)
                .where(Membership.organization == organization_id, Membership.role == MembershipRole.MANAGER)
                .distinct().order_by(User.email))
    return [user.email for user in managers]
