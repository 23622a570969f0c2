"""Billing routes (Specification C): collection, refunds and credit notes, invoices, self-billing
mandate, incidents, self-billing catch-up and supplier payout."""

from __future__ import annotations

from api.access import Route
from api.billing import collection, incidents, invoices, self_billing, self_billing_mandate


def routes(deps) -> list[Route]:
    return [*collection.routes(deps), *invoices.routes(deps), *self_billing_mandate.routes(deps),
            *incidents.routes(deps), *self_billing.routes(deps)]
