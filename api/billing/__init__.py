"""Billing routes (Specification C): collection, refunds and credit notes, invoices."""

from __future__ import annotations

from api.access import Route
from api.billing import collection, invoices


def routes(deps) -> list[Route]:
    return [*collection.routes(deps), *invoices.routes(deps)]
