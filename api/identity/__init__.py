"""Accounts, sessions, organizations and the admin console of users and organizations."""

from __future__ import annotations

from api.access import Route
from api.identity import admin, auth, organizations


def routes(deps) -> list[Route]:
    return [*auth.routes(deps), *organizations.routes(deps), *admin.routes(deps)]
