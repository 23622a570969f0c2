"""Overdue bank transfers (docs/bank.md "Overdue transfers")."""

from __future__ import annotations

from api.access import BILLING_MANAGER, Route
from api.operations import operation
from backend.billing.bank import overdue
from schemas.billing.bank.overdue import OverduePage
from schemas.billing.bank.statements import BankPageQuery


class Overdue:
    def __init__(self, config) -> None:
        self._config = config

    @operation("List the overdue bank transfers",
               description="`billing.manage.all`. `bank_transfer` collections no statement settled "
               "`BANK_TRANSFER_DUE_DAYS` (default 30) after their invoice's due date, oldest first, with when the one "
               "reminder e-mail went to the customer's billing contact.",
               tags=("bank",), query=BankPageQuery, answer=OverduePage)
    def on_get(self, req, resp, query: dict):
        return overdue.overdue(config=self._config, page=query["page"], page_size=query["pageSize"])


def routes(deps) -> list[Route]:
    return [Route("/api/admin/billing/bank/overdue", Overdue(deps.config), BILLING_MANAGER)]
