"""Admin views of users and organizations: the server-paginated lists (`backend.listing`) and the
organization detail with its members and SIRET conflicts."""

from __future__ import annotations

from peewee import JOIN, SQL, fn

from backend.errors import NotFound
from backend.identity.models import BillingProfile, Membership, Organization, User
from backend.listing import ListParams, Page, paginate

ORGANIZATION_SORTS = {"createdAt": Organization.created_at, "legalName": Organization.legal_name,
                      "siren": Organization.siren, "siret": BillingProfile.siret,
                      "kybStatus": Organization.kyb_status, "actorType": Organization.actor_type}
USER_SORTS = {"createdAt": User.created_at, "email": User.email, "name": User.name}

def shared_sirets():
    """SIRETs that more than one organization's billing profile declares (SIRET conflicts)."""
    shared = BillingProfile.alias("shared")
    return shared.select(shared.siret).group_by(shared.siret).having(fn.COUNT(SQL("*")) > 1)


def list_organizations(
    params: ListParams, *, kyb_status: str | None = None, actor_type: str | None = None,
    siret_conflict: bool | None = None,
) -> Page:
    """Organizations with their SIRET and whether another organization shares it."""
    conflict = BillingProfile.siret.in_(shared_sirets())
    query = (
        Organization.select(
            Organization,
            BillingProfile.siret.alias("siret"),
            fn.COALESCE(conflict, False).alias("siret_conflict"),
        )
        .join(BillingProfile, JOIN.LEFT_OUTER, on=(BillingProfile.organization == Organization.id))
        .objects()
    )
    if kyb_status == "none":
        query = query.where(Organization.kyb_status.is_null())
    elif kyb_status:
        query = query.where(Organization.kyb_status == kyb_status)
    if actor_type:
        query = query.where(Organization.actor_type == actor_type)
    if siret_conflict is not None:
        query = query.where(conflict if siret_conflict else ~fn.COALESCE(conflict, False))
    return paginate(
        query, params,
        sorts=ORGANIZATION_SORTS,
        default_sort="createdAt", tiebreaker=Organization.id,
        search_columns=(Organization.legal_name, Organization.siren, BillingProfile.siret),
    )


def list_users(params: ListParams, *, role: str | None = None, blocked: bool | None = None) -> Page:
    query = User.select()
    if role:
        query = query.where(User.roles.contains(role))
    if blocked is not None:
        query = query.where(User.blocked_at.is_null(not blocked))
    return paginate(
        query, params,
        sorts=USER_SORTS,
        default_sort="createdAt", tiebreaker=User.id, search_columns=(User.email, User.name),
    )


def organization_for_admin(organization_id: str) -> Organization:
    """`GET /api/admin/organizations/{id}`: the organization with `.billing`, `.members` (user,
    membership role) and `.siret_conflicts` (the other organizations declaring its SIRET)."""
    organization = Organization.get_or_none(Organization.id == organization_id)
    if organization is None:
        raise NotFound("no such organization")
    organization.billing = BillingProfile.get_or_none(BillingProfile.organization == organization_id)
    organization.members = list(
        User.select(User, Membership.role.alias("membership_role"))
        .join(Membership)
        .where(Membership.organization == organization_id)
        .order_by(Membership.created_at, Membership.id)
        .objects()
    )
    organization.siret_conflicts = []
    if organization.billing is not None:
        organization.siret_conflicts = list(
            Organization.select()
            .join(BillingProfile, on=(BillingProfile.organization == Organization.id))
            .where(BillingProfile.siret == organization.billing.siret, Organization.id != organization_id)
            .order_by(Organization.id)
        )
    return organization
