"""The route table's vocabulary: `Route` and every access rule a route may declare.

Every route of every area names one of the rules below (or builds one with `roles`/`admin` when it
is used once); `api.policy` enforces them. A rule used by two routes is defined here, once.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.identity.permissions import BILLING_MANAGE_ALL, KYB_REVIEW, PLATFORM_MANAGE


@dataclass(frozen=True)
class Access:
    """Who may call a route: `public`, `signature` (HMAC-verified webhook), `session` (any signed-in
    user), or `roles` (one of `roles`, optionally holding `permission`).

    `kyb_required`: a business route of an industrial or distributor workspace, refused (403,
    `details.reason = "kyb_not_approved"`) while the active organization's KYB is not approved.
    `membership_roles`: the caller's role in its active organization must be one of them
    (admins pass)."""

    kind: str
    roles: tuple[str, ...] = ()
    permission: str | None = None
    kyb_required: bool = False
    membership_roles: tuple[str, ...] = ()

    def describe(self) -> str:
        text = self.kind if self.kind != "roles" else " or ".join(self.roles)
        if self.permission:
            text += f" + {self.permission}"
        if self.membership_roles:
            text += " + membership " + " or ".join(self.membership_roles)
        if self.kyb_required:
            text += " + KYB approved"
        return text


def roles(
    *names: str,
    permission: str | None = None,
    kyb_required: bool = False,
    membership_roles: tuple[str, ...] = (),
) -> Access:
    return Access("roles", tuple(names), permission, kyb_required, tuple(membership_roles))


def admin(permission: str | None = None) -> Access:
    return Access("roles", ("admin",), permission)


PUBLIC = Access("public")
SIGNATURE = Access("signature")
SESSION = Access("session")
# Reference data of the business workspaces (ad spaces, furniture types, store zones): any signed-in
# user whose active organization is open for business (industrial and distributor: KYB approved).
BUSINESS_SESSION = Access("session", kyb_required=True)

INDUSTRIAL = roles("industrial", kyb_required=True)
DISTRIBUTOR = roles("distributor", kyb_required=True)
BUSINESS = roles("industrial", "distributor", kyb_required=True)
PRINTER = roles("printer")

ADMIN = admin()
CATALOG_ADMIN = admin("catalog.manage.all")
KYB_REVIEWER = admin(KYB_REVIEW)
PLATFORM_ADMIN = admin(PLATFORM_MANAGE)
# API.md: the permission `billing.manage.all` alone opens every route that names it, admin role or not.
BILLING_MANAGER = Access("session", permission=BILLING_MANAGE_ALL)


@dataclass(frozen=True)
class Route:
    """One entry of the route table: a path, its resource, its access rule (one for every method,
    or one per method), and the responder suffix when one resource serves several paths."""

    path: str
    resource: object
    access: Access | dict[str, Access]
    suffix: str | None = None

    def access_for(self, method: str) -> Access:
        if isinstance(self.access, Access):
            return self.access
        return self.access[method.upper()]
