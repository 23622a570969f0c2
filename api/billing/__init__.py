"""Billing routes (Specification C): collection, refunds and credit notes, invoices, self-billing mandate."""

from __future__ import annotations

from api.access import Route
from api.billing import collection, invoices, self_billing_mandate


def routes(deps) -> list[Route]:
    return [*collection.routes(deps), *invoices.routes(deps), *self_billing_mandate.routes(deps)]
