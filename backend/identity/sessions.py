"""Sessions: a random cookie value, stored only as its digest, expiring and revocable."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from peewee import JOIN, fn

from backend import clock
from backend.errors import Forbidden
from backend.identity.models import AuthSession, Membership, User
from backend.identity.permissions import permissions_for
from backend.identity.principal import Principal
from backend.identity.secrets import new_token, token_digest


@dataclass(frozen=True)
class ResolvedSession:
    session_id: str
    principal: Principal
    user: User  # the row the principal was built from (the session route answers it)


def open_session(
    user: User, *, ttl_days: int, ip: str | None = None, user_agent: str | None = None,
    active_organization_id: str | None = None,
) -> str:
    """Create a session for `user`; returns the token for the cookie (never stored)."""
    token = new_token()
    if active_organization_id is None:
        first = (
            Membership.select(Membership.organization)
            .where(Membership.user == user.id)
            .order_by(Membership.created_at, Membership.id)
            .first()
        )
        active_organization_id = first.organization_id if first else None
    AuthSession.create(
        user=user.id,
        token_hash=token_digest(token),
        active_organization=active_organization_id,
        ip=ip,
        user_agent=(user_agent or "")[:400] or None,
        expires_at=clock.now() + timedelta(days=ttl_days),
    )
    return token


def resolve_session(token: str | None) -> ResolvedSession | None:
    """The live session of a cookie value: not revoked, not expired, user not blocked. One SQL
    statement: the session, its user and the membership in the active organization."""
    if not token:
        return None
    row = (
        AuthSession.select(AuthSession, User, Membership.role.alias("membership_role"))
        .join(User)  # a model graph (not `.objects()`): `row.user` is this row, not a lazy query
        .switch(AuthSession)
        .join(
            Membership,
            JOIN.LEFT_OUTER,
            on=(Membership.user == AuthSession.user) & (Membership.organization == AuthSession.active_organization),
            attr="active_membership",
        )
        .where(
            AuthSession.token_hash == token_digest(token),
            AuthSession.revoked_at.is_null(),
            AuthSession.expires_at > clock.now(),
            User.blocked_at.is_null(),
        )
        .first()
    )
    if row is None:
        return None
    user = row.user
    membership = getattr(row, "active_membership", None)
    roles = frozenset(user.roles)
    return ResolvedSession(
        session_id=row.id,
        user=user,
        principal=Principal(
            user_id=user.id,
            email=user.email,
            roles=roles,
            permissions=permissions_for(roles, user.permissions),
            active_organization_id=row.active_organization_id,
            membership_role=getattr(membership, "membership_role", None),
        ),
    )


def belongs_to(session_id: str | None, user_id: str) -> bool:
    """Whether `session_id` is a live session of `user_id`."""
    if not session_id:
        return False
    return AuthSession.select().where(
        AuthSession.id == session_id, AuthSession.user == user_id, AuthSession.revoked_at.is_null(),
        AuthSession.expires_at > clock.now(),
    ).exists()


def revoke_session(session_id: str) -> None:
    AuthSession.update(revoked_at=clock.now()).where(
        AuthSession.id == session_id, AuthSession.revoked_at.is_null()
    ).execute()


def revoke_user_sessions(user_id: str, *, keep_session_id: str | None = None) -> int:
    """Revoke every live session of a user (but `keep_session_id`); returns how many."""
    query = AuthSession.update(revoked_at=clock.now()).where(
        AuthSession.user == user_id, AuthSession.revoked_at.is_null()
    )
    if keep_session_id:
        query = query.where(AuthSession.id != keep_session_id)
    return query.execute()


def set_active_organization(*, session_id: str, user_id: str, organization_id: str) -> None:
    """Make `organization_id` the session's active organization; it must be a membership."""
    member = Membership.select(Membership.id).where(
        Membership.user == user_id, Membership.organization == organization_id
    )
    updated = (
        AuthSession.update(active_organization=organization_id)
        .where(AuthSession.id == session_id, fn.EXISTS(member))
        .execute()
    )
    if not updated:
        raise Forbidden("not a member of this organization")
