"""Shapes of the books' routes (API.md "The books"): the FEC, the trial balance, an account's ledger."""

from __future__ import annotations

from marshmallow import EXCLUDE, Schema, fields, validate

from backend.billing.accounting.chart import Account
from schemas.common import enum_of


class FecQuery(Schema):
    class Meta:
        unknown = EXCLUDE

    fiscalYear = fields.Integer(required=True, validate=validate.Range(min=2000, max=9999),
                                metadata={"description": "the year of the fiscal year's closing date"})


class PeriodQuery(Schema):
    class Meta:
        unknown = EXCLUDE

    start = fields.Date(data_key="from", load_default=None, metadata={"description": "first entry date, included"})
    end = fields.Date(data_key="to", load_default=None, metadata={"description": "last entry date, included"})


class LedgerQuery(PeriodQuery):
    account = fields.String(required=True, validate=validate.OneOf([a.value for a in Account]),
                            metadata={"enum": [a.value for a in Account]})


class AccountTotalOut(Schema):
    account = fields.String(required=True, metadata={"description": "PCG account number ('' on the totals)"})
    label = fields.String(required=True)
    debitCents = fields.Integer(required=True, attribute="debit_cents")
    creditCents = fields.Integer(required=True, attribute="credit_cents")
    balanceCents = fields.Integer(required=True, attribute="balance_cents", metadata={"description": "debit - credit"})


class TrialBalanceOut(Schema):
    accounts = fields.List(fields.Nested(AccountTotalOut), required=True)
    totals = fields.Nested(AccountTotalOut, required=True)


class LedgerLineOut(Schema):
    entryNumber = fields.String(required=True, attribute="entry_number", metadata={"description": "EcritureNum"})
    journal = fields.String(required=True)
    entryDate = fields.Date(required=True, attribute="entry_date")
    pieceRef = fields.String(required=True, attribute="piece_ref")
    label = fields.String(required=True)
    auxAccount = fields.String(allow_none=True, attribute="aux_account", metadata={"description": "SIREN"})
    auxLabel = fields.String(allow_none=True, attribute="aux_label")
    debitCents = fields.Integer(required=True, attribute="debit_cents")
    creditCents = fields.Integer(required=True, attribute="credit_cents")
    letter = fields.String(allow_none=True, metadata={"description": "EcritureLet, null while not lettered"})


class LedgerOut(Schema):
    account = fields.String(required=True)
    label = fields.String(required=True)
    lines = fields.List(fields.Nested(LedgerLineOut), required=True)


class BankReconciliationQuery(Schema):
    class Meta:
        unknown = EXCLUDE

    date = fields.Date(required=True, metadata={"description": "the day the reconciliation is made at (its end)"})


class BankReconciliationItemOut(Schema):
    kind = fields.String(required=True, metadata=enum_of(("opening_balance", "line_not_posted", "receipt_in_transit",
                                                          "payment_in_transit", "waiting_line")))
    reference = fields.String(required=True, metadata={"description": "the invoice, or the bank's line reference"})
    amountCents = fields.Integer(required=True, attribute="amount_cents",
                                 metadata={"description": "as the bank moves it: positive in, negative out"})
    day = fields.Date(required=True, allow_none=True)
    ageDays = fields.Integer(required=True, allow_none=True, attribute="age_days")
    explainsDifference = fields.Boolean(required=True, attribute="explains_difference")


class BankReconciliationOut(Schema):
    date = fields.Date(required=True)
    bookBalanceCents = fields.Integer(required=True, attribute="book_balance_cents")
    bankBalanceCents = fields.Integer(required=True, attribute="bank_balance_cents")
    differenceCents = fields.Integer(required=True, attribute="difference_cents",
                                     metadata={"description": "bank - books"})
    unexplainedCents = fields.Integer(required=True, attribute="unexplained_cents")
    items = fields.List(fields.Nested(BankReconciliationItemOut), required=True)


class VatQuery(Schema):
    class Meta:
        unknown = EXCLUDE

    month = fields.String(required=True, validate=validate.Regexp(r"^(19|20)\d{2}-(0[1-9]|1[0-2])$"),
                          metadata={"description": "YYYY-MM, a month of 1900 to 2099"})


class VatRateOut(Schema):
    ratePercent = fields.Function(lambda line: None if line.rate_bps is None else line.rate_bps / 100,
                                  dump_only=True, metadata={"type": "number", "description": "null: no invoice"})
    baseCents = fields.Integer(required=True, attribute="base_cents", metadata={"description": "excluding tax"})
    vatCents = fields.Integer(required=True, attribute="vat_cents")


class VatReturnOut(Schema):
    month = fields.String(required=True)
    collected = fields.List(fields.Nested(VatRateOut), required=True, metadata={"description": "44571, per rate"})
    deductible = fields.List(fields.Nested(VatRateOut), required=True, metadata={"description": "44566, per rate"})
    collectedCents = fields.Integer(required=True, attribute="collected_cents")
    deductibleCents = fields.Integer(required=True, attribute="deductible_cents")
    dueCents = fields.Integer(required=True, attribute="due_cents", metadata={"description": "negative: a credit"})
