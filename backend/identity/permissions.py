"""Roles and permissions named by Specifications A-C, and what each role holds."""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    ADMIN = "admin"
    INDUSTRIAL = "industrial"
    DISTRIBUTOR = "distributor"
    PRINTER = "printer"


class MembershipRole(StrEnum):
    MANAGER = "manager"
    MEMBER = "member"
    BILLING = "billing"


KYB_REVIEW = "kyb.review"
CATALOG_MANAGE_ALL = "catalog.manage.all"
PLATFORM_MANAGE = "platform.manage"
BILLING_MANAGE_ALL = "billing.manage.all"
BILLING_COLLECT = "billing.collect"

PERMISSIONS = frozenset({KYB_REVIEW, CATALOG_MANAGE_ALL, PLATFORM_MANAGE, BILLING_MANAGE_ALL, BILLING_COLLECT})
ROLES = frozenset(r.value for r in Role)
MEMBERSHIP_ROLES = frozenset(r.value for r in MembershipRole)

# Admins hold every permission (API.md). An industrial organization pays for its reservations,
# so its users may collect (spec C still asks for KYB approved and membership manager/billing).
_ROLE_PERMISSIONS: dict[str, frozenset[str]] = {
    Role.ADMIN: PERMISSIONS,
    Role.INDUSTRIAL: frozenset({BILLING_COLLECT}),
    Role.DISTRIBUTOR: frozenset(),
    Role.PRINTER: frozenset(),
}

# Actor types of organizations a user may create or join, and the role that membership gives.
ROLE_BY_ACTOR_TYPE = {"industrial": Role.INDUSTRIAL, "distributor": Role.DISTRIBUTOR, "printer": Role.PRINTER}


def permissions_for(roles: frozenset[str] | list[str], extra: frozenset[str] | list[str] = ()) -> frozenset[str]:
    """The permissions held by a user: those of its roles plus those granted by assign-role."""
    held = set(extra) & PERMISSIONS
    for role in roles:
        held |= _ROLE_PERMISSIONS.get(role, frozenset())
    return frozenset(held)
