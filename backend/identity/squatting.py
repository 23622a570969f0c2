"""Organization squatting: an organization whose SIREN was taken by someone other than the
company. An admin hands it to its rightful owner (reassign) or deletes it; both are audited.

Reassigning replaces every membership by the new owner as manager, revokes the previous members'
sessions acting for it, and drops what they declared (billing profile, KYB status): the owner
fills them in and submits anew. The account an admin approved for them is voided
(`bank_details.void_approved`), so the organization's payouts and refunds not yet sent, which
recorded it, are held back until an admin gives them the account approved for the owner
(docs/bank.md "Payouts: money received, accounts reviewed").
Deleting refuses (409) an organization that already holds business records (reservations,
invoices...), which the database protects with its foreign keys.
"""

from __future__ import annotations

from peewee import IntegrityError

from backend import clock
from backend.audit import record_security_event
from backend.db import transaction
from backend.errors import Conflict, NotFound
from backend.identity import bank_details
from backend.identity.memberships import add_membership
from backend.identity.models import BillingProfile, Membership, Organization, User
from backend.identity.organizations import require_verified_email
from backend.identity.permissions import MembershipRole
from backend.identity.sessions import revoke_organization_sessions


def _locked(organization_id: str) -> Organization:
    organization = Organization.select().where(Organization.id == organization_id).for_update().first()
    if organization is None:
        raise NotFound("no such organization")
    return organization


def _member_ids(organization_id: str) -> list[str]:
    return [m.user_id for m in Membership.select(Membership.user).where(Membership.organization == organization_id)]


def reassign_organization(*, organization_id: str, user_id: str, note: str, actor_user_id: str) -> Organization:
    """Make `user_id` (a verified account) the only member, as manager; audited."""
    with transaction():
        organization = _locked(organization_id)
        if User.get_or_none(User.id == user_id) is None:
            raise NotFound("no such user")
        require_verified_email(user_id)
        previous = _member_ids(organization.id)
        Membership.delete().where(Membership.organization == organization.id).execute()
        revoke_organization_sessions(organization.id, [member for member in previous if member != user_id])
        BillingProfile.delete().where(BillingProfile.organization == organization.id).execute()
        voided = bank_details.void_approved(organization.id)
        Organization.update(kyb_status=None, kyb_note=None, kyb_submitted_at=None, kyb_reviewed_at=None,
                            updated_at=clock.now()).where(Organization.id == organization.id).execute()
        add_membership(user_id=user_id, organization=organization, role=MembershipRole.MANAGER,
                       actor_user_id=actor_user_id)
        record_security_event("admin.organization.reassigned", actor_user_id=actor_user_id,
                              target_type="organization", target_id=organization.id,
                              details={"toUserId": user_id, "previousMemberIds": previous, "note": note,
                                       "voidedAccount": voided})
    return Organization.get_by_id(organization_id)


def delete_organization(*, organization_id: str, note: str, actor_user_id: str) -> None:
    """Delete a squatted organization with its memberships, billing profile and invitations; audited."""
    try:
        with transaction():
            organization = _locked(organization_id)
            members = _member_ids(organization.id)
            organization.delete_instance()
            record_security_event("admin.organization.deleted", actor_user_id=actor_user_id,
                                  target_type="organization", target_id=organization.id,
                                  details={"siren": organization.siren, "legalName": organization.legal_name,
                                           "memberIds": members, "note": note})
    except IntegrityError:
        raise Conflict("the organization holds business records: reassign it instead",
                       reason="organization_in_use") from None
