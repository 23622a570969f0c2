"""E-invoicing (Specification C): the admin back-office, the deprecated operator webhook and an
XP Z12-013 platform's callbacks."""

from __future__ import annotations

from api.access import Route
from api.einvoicing import admin, afnor_callback, webhook


def routes(deps) -> list[Route]:
    return [*webhook.routes(deps), *afnor_callback.routes(deps), *admin.routes(deps)]
