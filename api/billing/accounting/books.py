"""The books (API.md "The books"): the FEC download, the trial balance, an account's ledger."""

from __future__ import annotations

from api.access import Route, admin
from api.operations import operation
from api.responses import private_attachment
from backend.billing.accounting import fec, reconciliation, reports, vat_return
from backend.billing.accounting.chart import account_label
from backend.identity.permissions import BILLING_MANAGE_ALL
from schemas.billing.accounting.books import (
    BankReconciliationOut,
    BankReconciliationQuery,
    FecQuery,
    LedgerOut,
    LedgerQuery,
    PeriodQuery,
    TrialBalanceOut,
    VatQuery,
    VatReturnOut,
)

BILLING_ADMIN = admin(BILLING_MANAGE_ALL)


class Fec:
    def __init__(self, config) -> None:
        self.config = config

    @operation("Download the FEC of a fiscal year",
               description="`billing.manage.all`. The Fichier des Écritures Comptables (article A47 A-1 of the "
               "Livre des procédures fiscales), streamed: `<SIREN>FEC<closing date YYYYMMDD>.txt`, ISO 8859-15, "
               "tab-separated, the 18 fields in their legal order, entries in validation order, the opening "
               "balances first from the second fiscal year on (docs/accounting.md). 409 `CONFLICT` "
               "(`details.reason = platform_siren_missing`) when `PLATFORM_LEGAL_SIRET` is not set: the file is named "
               "after the company's SIREN.",
               tags=("accounting",), query=FecQuery, produces=fec.CONTENT_TYPE)
    def on_get(self, req, resp, query: dict) -> None:
        year = query["fiscalYear"]
        name = fec.file_name(fec.platform_siren(self.config), year)  # refused before any byte is sent
        private_attachment(resp, fec.CONTENT_TYPE, name)  # the books: no cache keeps them
        resp.stream = fec.stream_fec(year)


class TrialBalance:
    @operation("Trial balance", description="`billing.manage.all`. Each account's debits, credits and balance over "
               "the entry dates `from` to `to` (both included; open-ended when absent), and their totals.",
               tags=("accounting",), query=PeriodQuery, answer=TrialBalanceOut)
    def on_get(self, req, resp, query: dict) -> reports.TrialBalance:
        return reports.trial_balance(start=query["start"], end=query["end"])


class Ledger:
    @operation("An account's ledger", description="`billing.manage.all`. The lines of one account of the chart "
               "over the entry dates `from` to `to`, in date then validation order, with their lettering.",
               tags=("accounting",), query=LedgerQuery, answer=LedgerOut)
    def on_get(self, req, resp, query: dict) -> dict:
        lines = reports.account_ledger(query["account"], start=query["start"], end=query["end"])
        return {"account": query["account"], "label": account_label(query["account"]), "lines": lines}


class BankReconciliation:
    @operation("Bank reconciliation", description="`billing.manage.all`. As of the end of `date`: the bank's balance "
               "(the statements imported), the books' 512, their difference (bank - books), and every item between "
               "them: those explaining the difference (the balance before the first statement imported, a line "
               "imported without its posting) and the money on its way (orders in a bank file not booked yet, "
               "on 511 and 473) or waiting to be explained (lines in 471, with their age). `unexplainedCents` is "
               "the difference the items leave (docs/accounting.md, \"Bank reconciliation\").",
               tags=("accounting",), query=BankReconciliationQuery, answer=BankReconciliationOut)
    def on_get(self, req, resp, query: dict) -> reconciliation.Reconciliation:
        return reconciliation.reconcile(query["date"])


class VatOfAMonth:
    @operation("The VAT of a month", description="`billing.manage.all`. From the books alone, the entries dated in "
               "`month` (`YYYY-MM`): per VAT rate, the VAT collected (44571) and the deductible VAT (44566) that "
               "became due that month (at issue when the seller opted for debits, when the bank booked the money "
               "otherwise; VAT still pending on 44574 and 44564 is not in it) with their bases (706 and its "
               "sub-accounts, 604; for VAT made due by a payment, the VAT over its rate), their totals and the VAT "
               "due (negative: a credit), as the French return (CA3) asks them; the totals equal the month's trial "
               "balance on 44571 and 44566.",
               tags=("accounting",), query=VatQuery, answer=VatReturnOut)
    def on_get(self, req, resp, query: dict) -> vat_return.VatReturn:
        return vat_return.vat_return(query["month"])


def routes(deps) -> list[Route]:
    return [
        Route("/api/admin/accounting/fec", Fec(deps.config), BILLING_ADMIN),
        Route("/api/admin/accounting/trial-balance", TrialBalance(), BILLING_ADMIN),
        Route("/api/admin/accounting/ledger", Ledger(), BILLING_ADMIN),
        Route("/api/admin/accounting/bank-reconciliation", BankReconciliation(), BILLING_ADMIN),
        Route("/api/admin/accounting/vat", VatOfAMonth(), BILLING_ADMIN),
    ]
