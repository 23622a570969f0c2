"""Users managed by admins: creation (printer users among others), update, blocking, and the
first admin from the command line."""

from __future__ import annotations

import re

from peewee import IntegrityError

from backend import clock
from backend.audit import record_security_event
from backend.db import transaction
from backend.errors import Conflict, NotFound, ValidationError
from backend.identity.accounts import normalize_email
from backend.identity.memberships import add_membership, grant_role, set_roles
from backend.identity.models import Organization, User
from backend.identity.permissions import MembershipRole, Role
from backend.identity.secrets import hash_password
from backend.identity.sessions import revoke_user_sessions


def _created_event(role: str) -> str:
    return "admin.admin.created" if role == Role.ADMIN else "admin.user.created"


def create_user(
    *, email: str, name: str, password: str | None, role: str, organization_id: str | None,
    membership_role: str | None, admin_user_id: str,
) -> User:
    """A user created by an admin, with its role and optionally a membership. Without a password
    it signs in by magic link (or sets one through a password reset)."""
    email = normalize_email(email)
    password_hash = hash_password(password) if password else None  # slow: outside the transaction
    with transaction():
        organization = None
        if organization_id is not None:
            organization = Organization.get_or_none(Organization.id == organization_id)
            if organization is None:
                raise NotFound("no such organization")
        try:
            with transaction():
                user = User.create(
                    email=email, name=name.strip(), password_hash=password_hash, roles=[role],
                    email_verified_at=clock.now(),
                )
        except IntegrityError:  # unique(email)
            raise Conflict("an account already uses this e-mail address") from None
        record_security_event(_created_event(role), actor_user_id=admin_user_id, target_type="user",
                              target_id=user.id, details={"email": email, "role": role})
        if organization is not None:
            add_membership(user_id=user.id, organization=organization,
                           role=membership_role or MembershipRole.MEMBER, actor_user_id=admin_user_id)
    return User.get_by_id(user.id)


def update_user(
    *, user_id: str, admin_user_id: str, name: str | None = None, roles: list[str] | None = None,
    permissions: list[str] | None = None, blocked: bool | None = None,
) -> User:
    """Change a user's name, roles, granted permissions or blocked state. Blocking revokes every
    session of the user at once."""
    if blocked and user_id == admin_user_id:
        raise ValidationError("an admin cannot block itself", fields={"blocked": ["cannot block yourself"]})
    with transaction():
        user = User.select().where(User.id == user_id).for_update().first()
        if user is None:
            raise NotFound("no such user")
        changed = []
        if name is not None and name.strip() != user.name:
            User.update(name=name.strip(), updated_at=clock.now()).where(User.id == user_id).execute()
            changed.append("name")
        if roles is not None or permissions is not None:
            set_roles(user, roles if roles is not None else list(user.roles), permissions,
                      actor_user_id=admin_user_id)
            changed.append("roles")
        if blocked is not None and blocked != (user.blocked_at is not None):
            _set_blocked(user, blocked, admin_user_id=admin_user_id)
            changed.append("blocked")
        if changed:
            record_security_event("admin.user.updated", actor_user_id=admin_user_id, target_type="user",
                                  target_id=user_id, details={"changed": changed})
    return User.get_by_id(user_id)


def _set_blocked(user: User, blocked: bool, *, admin_user_id: str) -> None:
    now = clock.now()
    User.update(blocked_at=now if blocked else None, updated_at=now).where(User.id == user.id).execute()
    revoked = revoke_user_sessions(user.id) if blocked else 0
    record_security_event("admin.user.blocked" if blocked else "admin.user.unblocked", actor_user_id=admin_user_id,
                          target_type="user", target_id=user.id, details={"sessionsRevoked": revoked})


def ensure_admin(*, email: str, password: str) -> tuple[User, bool]:
    """`vitrine create-admin`: create the admin, or promote an existing user (its password is
    left unchanged). Returns (user, created)."""
    email = normalize_email(email)
    if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", email):
        raise ValidationError("not an e-mail address", fields={"email": ["not an e-mail address"]})
    if not 8 <= len(password) <= 128:
        raise ValidationError("the password must have 8 to 128 characters", fields={"password": ["8 to 128"]})
    password_hash = hash_password(password)
    with transaction():
        try:
            with transaction():
                user = User.create(email=email, name=email.split("@")[0], password_hash=password_hash,
                                   roles=[Role.ADMIN], email_verified_at=clock.now())
        except IntegrityError:  # the user exists: promote it
            user = User.get(User.email == email)
            if grant_role(user.id, Role.ADMIN):
                record_security_event("admin.admin.created", actor_user_id=None, target_type="user",
                                      target_id=user.id, details={"email": email, "promoted": True})
            return User.get_by_id(user.id), False
        record_security_event("admin.admin.created", actor_user_id=None, target_type="user", target_id=user.id,
                              details={"email": email, "via": "cli"})
        return user, True
