"""The journals and the chart of accounts the books use (French PCG), in one table each.

Every posting (`ledger`) names its accounts through `Account` below, never by a literal number,
and every reader (the FEC, the trial balance, the ledger route, `vitrine accounting verify`) takes
the labels from here: docs/accounting.md shows the same two tables to the accountant.

| account | number | label (CompteLib) | auxiliary account (CompAuxNum) |
|---|---|---|---|
| CUSTOMERS | 411 | Clients | the customer organization's SIREN |
| SUPPLIERS | 401 | Fournisseurs | the distributor's SIREN |
| STORE_FUNDS | 467 | Autres comptes débiteurs ou créditeurs | the store's (distributor's) SIREN |
| SERVICES_SOLD | 706 | Prestations de services | |
| SERVICES_SOLD_EU_REVERSE_CHARGE | 7062 | Prestations de services - UE autoliquidation | |
| SERVICES_BOUGHT | 604 | Achats d'études et prestations de services | |
| VAT_COLLECTED | 44571 | TVA collectée | |
| VAT_DEDUCTIBLE | 44566 | TVA déductible sur autres biens et services | |
| VAT_COLLECTED_PENDING | 44574 | TVA collectée non encore exigible | |
| VAT_DEDUCTIBLE_PENDING | 44564 | TVA déductible non encore exigible | |
| BANK | 512 | Banque | |
| RECEIPTS_IN_TRANSIT | 511 | Valeurs à l'encaissement | |
| PAYMENTS_IN_TRANSIT | 473 | Décaissements en cours | |
| SUSPENSE | 471 | Compte d'attente | |

`512` moves only with a line of a bank statement: what the platform asked the bank for and the bank
has not booked yet waits in `511` (debits sent) or `473` (transfers sent), and a statement line
nothing explains waits in `471` until an admin does (docs/accounting.md, "The books follow the
bank").

VAT on services is due when the price is received (`vat_due`): until then a sale's VAT waits in
`44574` and a self-billed purchase's deductible VAT in `44564`, each line in the invoice's
lettering group, so that what is still pending per invoice is read from the books.

`467` is the account of the money the platform holds for a store and owes it (legacy
`legacy_mandate` reservations: the store sells, the platform collects on its behalf).
"""

from __future__ import annotations

from enum import StrEnum


class Journal(StrEnum):
    SALES = "VE"
    PURCHASES = "AC"
    BANK = "BQ"
    OTHER = "OD"


JOURNAL_LABELS = {
    Journal.SALES: "Ventes",
    Journal.PURCHASES: "Achats",
    Journal.BANK: "Banque",
    Journal.OTHER: "Opérations diverses",
}


class Account(StrEnum):
    CUSTOMERS = "411"
    SUPPLIERS = "401"
    STORE_FUNDS = "467"
    SERVICES_SOLD = "706"
    SERVICES_SOLD_EU_REVERSE_CHARGE = "7062"  # a sale reverse charged to a buyer of another member state
    SERVICES_BOUGHT = "604"
    VAT_COLLECTED = "44571"
    VAT_DEDUCTIBLE = "44566"
    VAT_COLLECTED_PENDING = "44574"
    VAT_DEDUCTIBLE_PENDING = "44564"
    BANK = "512"
    RECEIPTS_IN_TRANSIT = "511"
    PAYMENTS_IN_TRANSIT = "473"
    SUSPENSE = "471"


ACCOUNT_LABELS = {
    Account.CUSTOMERS: "Clients",
    Account.SUPPLIERS: "Fournisseurs",
    Account.STORE_FUNDS: "Autres comptes débiteurs ou créditeurs",
    Account.SERVICES_SOLD: "Prestations de services",
    Account.SERVICES_SOLD_EU_REVERSE_CHARGE: "Prestations de services - UE autoliquidation",
    Account.SERVICES_BOUGHT: "Achats d'études et prestations de services",
    Account.VAT_COLLECTED: "TVA collectée",
    Account.VAT_DEDUCTIBLE: "TVA déductible sur autres biens et services",
    Account.VAT_COLLECTED_PENDING: "TVA collectée non encore exigible",
    Account.VAT_DEDUCTIBLE_PENDING: "TVA déductible non encore exigible",
    Account.BANK: "Banque",
    Account.RECEIPTS_IN_TRANSIT: "Valeurs à l'encaissement",
    Account.PAYMENTS_IN_TRANSIT: "Décaissements en cours",
    Account.SUSPENSE: "Compte d'attente",
}

# Accounts kept per third party: their lines carry the party's SIREN (auxiliary account) and are
# lettered per piece.
THIRD_PARTY_ACCOUNTS = frozenset({Account.CUSTOMERS, Account.SUPPLIERS, Account.STORE_FUNDS})


def account_label(number: str) -> str:
    return ACCOUNT_LABELS[Account(number)]


def labels_sql(table: str = "chart") -> str:
    """The chart as a SQL `VALUES` list `table (number, label)`, for readers joining labels."""
    rows = ", ".join(f"('{account.value}', '{label.replace(chr(39), chr(39) * 2)}')"
                     for account, label in ACCOUNT_LABELS.items())
    return f"(VALUES {rows}) AS {table} (number, label)"



def journals_sql(table: str = "journals") -> str:
    """The journals as a SQL `VALUES` list `table (code, label)`."""
    rows = ", ".join(f"('{journal.value}', '{label.replace(chr(39), chr(39) * 2)}')"
                     for journal, label in JOURNAL_LABELS.items())
    return f"(VALUES {rows}) AS {table} (code, label)"
