"""E-invoicing (Specification C): the admin back-office and the deprecated operator webhook."""

from __future__ import annotations

from api.access import Route
from api.einvoicing import admin, webhook


def routes(deps) -> list[Route]:
    return [*webhook.routes(deps), *admin.routes(deps)]
