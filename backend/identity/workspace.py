"""Workspace routing (Specification A, Specification B "What the service does" 1-3).

`home` is the workspace of the caller: `/admin` for admins, else that of the active
organization's actor type (else of the user's role). `redirectTo` says where the workspace is
sent while it is blocked: `/onboarding-signature-pending` while the active organization has a
pending onboarding envelope, else `/onboarding` while an industrial or distributor
organization's KYB is not approved.
"""

from __future__ import annotations

from collections.abc import Callable
from posixpath import normpath

from backend.errors import ValidationError
from backend.identity.models import Organization, User
from backend.identity.organizations import organizations_of
from backend.identity.permissions import Role
from backend.identity.principal import Principal

SIGNATURE_PENDING_PATH = "/onboarding-signature-pending"
ONBOARDING_PATH = "/onboarding"
WORKSPACES = {"/admin": Role.ADMIN, "/industrial": Role.INDUSTRIAL, "/distributor": Role.DISTRIBUTOR,
              "/printer": Role.PRINTER}
HOME_BY_ROLE = {role: prefix for prefix, role in WORKSPACES.items()}
# Workspaces that an unapproved KYB blocks. A pending onboarding envelope blocks every
# organization workspace, the printer's included (Specification A, point 4).
GATED_WORKSPACES = frozenset({"/industrial", "/distributor"})
SIGNATURE_GATED_WORKSPACES = GATED_WORKSPACES | {"/printer"}

# The onboarding area installs the check "has this organization a pending onboarding
# envelope?"; until it does, no envelope is ever pending.
_onboarding_pending: Callable[[str], bool] = lambda organization_id: False  # noqa: E731


def set_onboarding_pending_check(check: Callable[[str], bool]) -> None:
    global _onboarding_pending
    _onboarding_pending = check


def _home(principal: Principal, organization: Organization | None) -> str | None:
    if principal.is_admin:
        return HOME_BY_ROLE[Role.ADMIN]
    if organization is not None:
        return HOME_BY_ROLE[Role(organization.actor_type)]
    for role in (Role.INDUSTRIAL, Role.DISTRIBUTOR, Role.PRINTER):
        if role in principal.roles:
            return HOME_BY_ROLE[role]
    return None


def workspace_for(principal: Principal, organizations: list[Organization] | None = None) -> dict:
    """`{home, redirectTo}`; a user without a role yet has no home and goes to `/onboarding`
    (it must create or join an organization). `organizations`: the user's, when the caller has
    already read them (the active one is then not read again)."""
    organization = next((o for o in organizations or () if o.id == principal.active_organization_id), None)
    if organization is None and principal.active_organization_id:
        organization = Organization.get_or_none(Organization.id == principal.active_organization_id)
    home = _home(principal, organization)
    redirect = None
    if home is None:
        redirect = ONBOARDING_PATH
    elif organization is not None and not principal.is_admin:
        if _onboarding_pending(organization.id):
            redirect = SIGNATURE_PENDING_PATH
        elif organization.kyb_blocked:
            redirect = ONBOARDING_PATH
    return {"home": home, "redirectTo": redirect}


def _workspace_of(path: str) -> str | None:
    return next((prefix for prefix in WORKSPACES if path == prefix or path.startswith(prefix + "/")), None)


def normalize_path(path: str) -> str:
    path = path.split("?", 1)[0].split("#", 1)[0]
    if not path.startswith("/"):
        raise ValidationError("path must start with /", fields={"path": ["must start with /"]})
    # Resolve "." and ".." so "/printer/../admin" is judged as "/admin".
    return normpath("/" + path.lstrip("/"))


def resolve_path(principal: Principal, path: str) -> dict:
    """`{allowed, redirectTo}` for opening `path` in the front end."""
    path = normalize_path(path)
    workspace = workspace_for(principal)
    fallback = workspace["redirectTo"] or workspace["home"] or ONBOARDING_PATH
    if path == "/":
        return {"allowed": True, "redirectTo": fallback}
    prefix = _workspace_of(path)
    if prefix is None:
        return {"allowed": True, "redirectTo": None}
    if WORKSPACES[prefix] not in principal.roles:
        return {"allowed": False, "redirectTo": fallback}
    redirect = workspace["redirectTo"]
    gated = SIGNATURE_GATED_WORKSPACES if redirect == SIGNATURE_PENDING_PATH else GATED_WORKSPACES
    if prefix in gated and redirect:
        return {"allowed": False, "redirectTo": redirect}
    return {"allowed": True, "redirectTo": None}


def describe_session(principal: Principal, user: User | None = None,
                     organizations: list[tuple[Organization, str]] | None = None) -> dict:
    """`GET /api/auth/session`: the user, its roles, permissions, organizations and workspace.
    `user` and `organizations` (`organizations_of`): as read with the session, when the caller
    has them (a query less each)."""
    memberships = organizations if organizations is not None else organizations_of(principal.user_id)
    return {
        "user": user if user is not None else User.get_by_id(principal.user_id),
        "roles": sorted(principal.roles),
        "permissions": sorted(principal.permissions),
        "activeOrganizationId": principal.active_organization_id,
        "organizations": [
            {"id": org.id, "actorType": org.actor_type, "legalName": org.legal_name, "kybStatus": org.kyb_status,
             "membershipRole": role}
            for org, role in memberships
        ],
        "workspace": workspace_for(principal, [org for org, _ in memberships]),
    }
