"""Access rules every route declares in the route table (enforced by `api.policy`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Access:
    """Who may call a route: `public`, `signature` (HMAC-verified webhook), `session` (any signed-in
    user), or `roles` (one of `roles`, optionally holding `permission`)."""

    kind: str
    roles: tuple[str, ...] = ()
    permission: str | None = None

    def describe(self) -> str:
        if self.kind != "roles":
            return self.kind
        text = " or ".join(self.roles)
        return f"{text} + {self.permission}" if self.permission else text


PUBLIC = Access("public")
SIGNATURE = Access("signature")
SESSION = Access("session")


def roles(*names: str, permission: str | None = None) -> Access:
    return Access("roles", tuple(names), permission)


def admin(permission: str | None = None) -> Access:
    return Access("roles", ("admin",), permission)
