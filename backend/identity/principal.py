"""The authenticated caller of a request, as the policy middleware resolves it."""

from __future__ import annotations

from dataclasses import dataclass

from backend.identity.permissions import Role


@dataclass(frozen=True)
class Principal:
    user_id: str
    email: str
    roles: frozenset[str]
    permissions: frozenset[str]
    active_organization_id: str | None
    membership_role: str | None  # the user's role in the active organization
    # Whether the active organization's business routes are open (it exists, KYB not blocking),
    # read with the session; None when not known (then `business_open` reads it).
    organization_open: bool | None = None

    @property
    def is_admin(self) -> bool:
        return Role.ADMIN in self.roles

    def has_permission(self, name: str) -> bool:
        return name in self.permissions
