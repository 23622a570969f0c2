"""Sessions: a random cookie value, stored only as its digest, expiring and revocable."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from peewee import fn

from backend import clock
from backend.db import database
from backend.errors import Forbidden
from backend.identity.models import AuthSession, Membership, Organization, User, kyb_blocked
from backend.identity.permissions import permissions_for
from backend.identity.principal import Principal
from backend.identity.secrets import new_token, token_digest


@dataclass(frozen=True)
class ResolvedSession:
    session_id: str
    principal: Principal
    user: User  # the row the principal was built from (the session route answers it)
    # The user's organizations with its role in each, oldest membership first, when asked for.
    organizations: list[tuple[Organization, str]] | None = None


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


# Every signed-in request runs this, so it is written out once: peewee building the statement
# cost several times the CPU PostgreSQL spends running it. One statement: the live session, its
# user, the membership in the active organization and that organization's KYB gate (the active
# organization is the membership's: a member removed since acts for none); with
# `{organizations}`, the user's organizations too (the session route), as one JSON array.
SESSION_SQL = (
    "SELECT s.id, m.organization_id, m.role, o.actor_type, o.kyb_status,"
    " u.id, u.email, u.name, u.email_verified_at, u.roles, u.permissions, u.created_at{organizations}"
    " FROM auth_session s"
    " JOIN app_user u ON u.id = s.user_id"
    " LEFT JOIN membership m ON m.user_id = s.user_id AND m.organization_id = s.active_organization_id"
    " LEFT JOIN organization o ON o.id = m.organization_id"
    " WHERE s.token_hash = %(token_hash)s AND s.revoked_at IS NULL AND s.expires_at > %(now)s AND u.blocked_at IS NULL"
)
ORGANIZATIONS_SQL = (
    ", (SELECT coalesce(json_agg(json_build_array(uo.id, uo.actor_type, uo.legal_name, uo.kyb_status, um.role)"
    " ORDER BY um.created_at, um.id), '[]') FROM membership um JOIN organization uo ON uo.id = um.organization_id"
    " WHERE um.user_id = s.user_id)"
)
SESSION_ONLY = SESSION_SQL.format(organizations="")
SESSION_WITH_ORGANIZATIONS = SESSION_SQL.format(organizations=ORGANIZATIONS_SQL)
SESSION_STATEMENTS = {False: SESSION_ONLY, True: SESSION_WITH_ORGANIZATIONS}


def resolve_session(token: str | None, *, organizations: bool = False) -> ResolvedSession | None:
    """The live session of a cookie value: not revoked, not expired, user not blocked (one SQL
    statement); `organizations`: with the user's organizations, in the same statement."""
    if not token:
        return None
    row = database.execute_sql(SESSION_STATEMENTS[organizations],
                               {"token_hash": token_digest(token), "now": clock.now()}).fetchone()
    if row is None:
        return None
    (session_id, active_organization_id, membership_role, actor_type, kyb_status,
     user_id, email, name, email_verified_at, user_roles, user_permissions, created_at) = row[:12]
    # Only the columns read here are loaded: `user` answers the session route, nothing saves it.
    user = User(id=user_id, email=email, name=name, email_verified_at=email_verified_at,
                roles=user_roles, permissions=user_permissions, created_at=created_at)
    roles = frozenset(user_roles)
    return ResolvedSession(
        session_id=session_id,
        user=user,
        principal=Principal(
            user_id=user_id,
            email=email,
            roles=roles,
            permissions=permissions_for(roles, user_permissions),
            active_organization_id=active_organization_id,
            membership_role=membership_role,
            organization_open=actor_type is not None and not kyb_blocked(actor_type, kyb_status),
        ),
        organizations=[
            (Organization(id=org_id, actor_type=org_type, legal_name=legal_name,
                          kyb_status=org_kyb), role)
            for org_id, org_type, legal_name, org_kyb, role in row[12]
        ] if organizations else None,
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


def revoke_organization_sessions(organization_id: str, user_ids: list[str]) -> int:
    """Revoke the live sessions of `user_ids` acting for `organization_id` (members removed from it)."""
    return AuthSession.update(revoked_at=clock.now()).where(
        AuthSession.active_organization == organization_id, AuthSession.user.in_(user_ids),
        AuthSession.revoked_at.is_null()).execute() if user_ids else 0


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
