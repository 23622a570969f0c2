"""Roles of users and memberships of organizations, with their audit trail.

A user gains the role of an organization's actor type when it creates or joins one (API.md),
audited with the membership; other roles are set by an admin (assign-role, admin user update),
audited as `admin.role.changed`.
"""

from __future__ import annotations

from peewee import IntegrityError, fn

from backend import clock
from backend.audit import record_security_event
from backend.db import transaction
from backend.errors import Conflict, NotFound, ValidationError
from backend.identity.models import Membership, Organization, User
from backend.identity.permissions import PERMISSIONS, ROLE_BY_ACTOR_TYPE, ROLES


def grant_role(user_id: str, role: str) -> bool:
    """Add `role` to the user's roles; True when it was new. The caller audits the action that
    grants it (membership creation, admin promotion)."""
    updated = (
        User.update(roles=fn.array_append(User.roles, str(role)), updated_at=clock.now())
        .where(User.id == user_id, ~User.roles.contains(str(role)))
        .execute()
    )
    return bool(updated)


def set_roles(user: User, roles: list[str], permissions: list[str] | None, *, actor_user_id: str) -> None:
    """Replace a user's roles (and granted permissions when given), auditing the difference."""
    _check_known(roles, permissions)
    before_roles, before_permissions = set(user.roles), set(user.permissions)
    if ADMIN in before_roles and ADMIN not in roles:
        _check_admin_removable(user.id, actor_user_id=actor_user_id)
    changes: dict[str, object] = {"updated_at": clock.now(), "roles": sorted(set(roles))}
    if permissions is not None:
        changes["permissions"] = sorted(set(permissions))
    User.update(**changes).where(User.id == user.id).execute()
    after_permissions = set(changes.get("permissions", before_permissions))
    if set(roles) != before_roles or after_permissions != before_permissions:
        record_security_event(
            "admin.role.changed", actor_user_id=actor_user_id, target_type="user", target_id=user.id,
            details={
                "added": sorted(set(roles) - before_roles),
                "removed": sorted(before_roles - set(roles)),
                "permissions": sorted(after_permissions),
            },
        )


ADMIN = "admin"


def _check_admin_removable(user_id: str, *, actor_user_id: str) -> None:
    """Nobody removes their own admin role, and the platform keeps at least one admin. The admin
    rows are locked first, so two admins removing each other at once cannot leave none."""
    if user_id == actor_user_id:
        raise Conflict("an admin cannot remove their own admin role", reason="own_admin_role")
    admins = [u.id for u in User.select(User.id).where(User.roles.contains(ADMIN)).order_by(User.id).for_update()]
    if set(admins) <= {user_id}:
        raise Conflict("the last admin keeps the admin role", reason="last_admin")


def assign_role(*, user_id: str, role: str, permissions: list[str] | None, actor_user_id: str) -> User:
    """`POST /api/auth/assign-role`: add a role (and set granted permissions when given)."""
    with transaction():
        user = User.select().where(User.id == user_id).for_update().first()
        if user is None:
            raise NotFound("no such user")
        set_roles(user, [*user.roles, role], permissions, actor_user_id=actor_user_id)
    return User.get_by_id(user_id)


def _check_known(roles: list[str], permissions: list[str] | None) -> None:
    unknown_roles = set(roles) - ROLES
    unknown_permissions = set(permissions or ()) - PERMISSIONS
    fields = {}
    if unknown_roles:
        fields["role"] = [f"unknown role: {', '.join(sorted(unknown_roles))}"]
    if unknown_permissions:
        fields["permissions"] = [f"unknown permission: {', '.join(sorted(unknown_permissions))}"]
    if fields:
        raise ValidationError("unknown role or permission", fields=fields)


def add_membership(
    *, user_id: str, organization: Organization, role: str, actor_user_id: str | None
) -> Membership:
    """Make the user a member (409 if already one) and give it the organization's role."""
    with transaction():
        try:
            with transaction():
                membership = Membership.create(user=user_id, organization=organization.id, role=role)
        except IntegrityError:  # unique(user_id, organization_id)
            raise Conflict("the user is already a member of this organization") from None
        role_of_type = ROLE_BY_ACTOR_TYPE[organization.actor_type]
        newly_granted = grant_role(user_id, role_of_type)
        record_security_event(
            "organization.membership.created", actor_user_id=actor_user_id, target_type="organization",
            target_id=organization.id,
            details={"userId": user_id, "role": role, "grantedRole": role_of_type if newly_granted else None},
        )
    return membership
