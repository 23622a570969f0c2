"""Invitations to join an organization: a single-use e-mailed token, valid 7 days, accepted by a
signed-in user holding the invited address, once verified. Only admins invite into a printer
organization. The token is minted when the e-mail is delivered (`mint_invitation_token`, as
backend.identity.tokens does for sign-in links)."""

from __future__ import annotations

from datetime import timedelta

from backend import clock
from backend.audit import record_security_event
from backend.db import transaction
from backend.email.messages import LinkAtDelivery, queue_email
from backend.email.templates import membership_role_label
from backend.errors import Forbidden, NotFound
from backend.identity.memberships import add_membership
from backend.identity.models import ActorType, Invitation, Organization, User
from backend.identity.organizations import MANAGERS, organization_for, require_verified_email
from backend.identity.principal import Principal
from backend.identity.secrets import new_token, token_digest
from backend.identity.sessions import set_active_organization

INVITATION_TTL = timedelta(days=7)
INVITATION_LINK = "invitation"  # the `LinkAtDelivery` kind of invitations


def create_invitation(*, principal: Principal, organization_id: str, email: str, role: str) -> Invitation:
    """An admin or a manager invites `email` with a membership role; the link goes by e-mail."""
    organization = organization_for(principal, organization_id, membership_roles=MANAGERS)
    if organization.actor_type == ActorType.PRINTER and not principal.is_admin:
        # Printers are provisioned by an admin (spec B): a member cannot hand out the printer role.
        raise Forbidden("only an admin invites into a printer organization", reason="printer_invitation_admin_only")
    email = email.strip().lower()
    with transaction():
        invitation = Invitation.create(
            organization=organization.id,
            email=email,
            role=role,
            invited_by=principal.user_id,
            expires_at=clock.now() + INVITATION_TTL,
        )
        inviter = User.get_by_id(principal.user_id)
        queue_email("invitation", to=email, inviter=inviter.name, organization=organization.legal_name,
                    role=membership_role_label(role), link_at_delivery=LinkAtDelivery(INVITATION_LINK, invitation.id))
        record_security_event("organization.invitation.created", actor_user_id=principal.user_id,
                              target_type="organization", target_id=organization.id,
                              details={"invitationId": invitation.id, "email": email, "role": role})
    return invitation


def mint_invitation_token(invitation_id: str) -> str | None:
    """A new token for the invitation whose e-mail is being delivered (its digest replaces any
    earlier one); None when it was accepted or expired."""
    token = new_token()
    updated = (
        Invitation.update(token_hash=token_digest(token))
        .where(Invitation.id == invitation_id, Invitation.accepted_at.is_null(), Invitation.expires_at > clock.now())
        .execute()
    )
    return token if updated else None


def accept_invitation(*, token: str, principal: Principal, session_id: str) -> Organization:
    """Join the organization: unknown, used or expired tokens are NOT_FOUND; the invitation is
    bound to its e-mail address, so another account is FORBIDDEN."""
    now = clock.now()
    require_verified_email(principal.user_id)
    with transaction():
        invitation = (
            Invitation.select()
            .where(Invitation.token_hash == token_digest(token), Invitation.accepted_at.is_null(),
                   Invitation.expires_at > now)
            .for_update()
            .first()
        )
        if invitation is None:
            raise NotFound("no such invitation, or it expired or was used")
        if invitation.email != principal.email:
            raise Forbidden("this invitation was sent to another e-mail address")
        Invitation.update(accepted_at=now, accepted_by=principal.user_id).where(
            Invitation.id == invitation.id
        ).execute()
        organization = Organization.get_by_id(invitation.organization_id)
        add_membership(user_id=principal.user_id, organization=organization, role=invitation.role,
                       actor_user_id=principal.user_id)
        set_active_organization(session_id=session_id, user_id=principal.user_id, organization_id=organization.id)
        record_security_event("organization.invitation.accepted", actor_user_id=principal.user_id,
                              target_type="organization", target_id=organization.id,
                              details={"invitationId": invitation.id, "role": invitation.role})
    return organization
