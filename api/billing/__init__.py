"""Billing routes (Specification C): collection, refunds and credit notes, invoices, self-billing
mandate, incidents, self-billing catch-up, supplier payout, the books, and the bank."""

from __future__ import annotations

from api.access import Route
from api.billing import collection, invoices, payouts
from api.billing.accounting import books
from api.billing.bank import files as bank_files
from api.billing.bank import overdue, statements
from api.billing.self_billing import acceptance, incidents, invoice, mandate


def routes(deps) -> list[Route]:
    return [*collection.routes(deps), *invoices.routes(deps), *mandate.routes(deps),
            *incidents.routes(deps), *invoice.routes(deps),
            *acceptance.routes(deps), *payouts.routes(deps), *books.routes(deps), *bank_files.routes(deps),
            *statements.routes(deps), *overdue.routes(deps)]
