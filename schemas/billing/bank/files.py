"""Shapes of the files for the bank (API.md "The bank")."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend.billing.bank.files import SORTS
from backend.billing.models import BankFileKind, BankFileStatus, PaymentKind
from schemas.common import PageQuery, UtcDateTime, enum_of, page_of, sort_by


class BankFileOut(Schema):
    """`backend.billing.models.BankFile`."""

    id = fields.String(required=True)
    kind = fields.String(required=True, metadata={
        **enum_of(BankFileKind), "description": "`direct_debit`: pain.008.001.08; `credit_transfer`: pain.001.001.09"})
    messageId = fields.String(attribute="message_id", required=True, metadata={"description": "GrpHdr/MsgId"})
    count = fields.Integer(required=True, metadata={"description": "transactions (payment orders) in the file"})
    controlSumCents = fields.Integer(attribute="control_sum_cents", required=True,
                                     metadata={"description": "the sum of its transactions, GrpHdr/CtrlSum"})
    createdAt = UtcDateTime(attribute="created_at", required=True)


class BankFileItemOut(BankFileOut):
    requestedOn = fields.Date(attribute="requested_on", required=True, metadata={
        "description": "requested collection date (debits) or execution date (transfers), a TARGET2 day"})
    status = fields.String(required=True, metadata={
        **enum_of(BankFileStatus), "description": "`live`; `void`: refused by the bank, its orders free again"})
    sha256 = fields.String(required=True, metadata={"description": "of the XML as stored and downloaded"})
    createdByUserId = fields.String(attribute="created_by_user_id", allow_none=True,
                                    metadata={"description": "null when made from the command line"})


HELD_REASON = {
    "enum": ["kyb_not_approved", "creditor_account_missing", "creditor_account_voided", "bank_details_invalid",
             "mandate_ended"],
    "description": "the creditor's or debtor's KYB under review, no approved account recorded, the recorded "
                   "account voided since (the organization given back after squatting), an account or mandate "
                   "value failing its check (`field`, `problem`), the debit's mandate ended"}


class HeldOut(Schema):
    """`backend.billing.bank.orders.Held`: an order held back from a file, and why."""

    paymentOrderId = fields.String(attribute="payment_order_id", required=True)
    reason = fields.String(required=True, metadata=HELD_REASON)
    field = fields.String(allow_none=True, metadata={
        "description": "bank_details_invalid: creditorIban, creditorBic, debtorIban, mandateReference or "
                       "invoiceNumber"})
    problem = fields.String(allow_none=True)


class HeldItemOut(Schema):
    """`backend.billing.bank.files.HeldOrder`."""

    paymentOrderId = fields.String(attribute="payment_order_id", required=True)
    reason = fields.String(required=True, metadata=HELD_REASON)
    field = fields.String(allow_none=True)
    problem = fields.String(allow_none=True)
    kind = fields.String(required=True, metadata=enum_of(PaymentKind))
    organizationId = fields.String(attribute="organization_id", required=True)
    reservationId = fields.String(attribute="reservation_id", allow_none=True)
    amountCents = fields.Integer(attribute="amount_cents", required=True, metadata={"description": "including VAT"})
    createdAt = UtcDateTime(attribute="created_at", required=True)


class BankFileMadeOut(Schema):
    """`backend.billing.bank.files.Made`."""

    file = fields.Nested(BankFileOut, required=True)
    held = fields.List(fields.Nested(HeldOut), required=True,
                       metadata={"description": "the orders held back from this file, and why (they stay unsent)"})


class HeldListOut(Schema):
    items = fields.List(fields.Nested(HeldItemOut), required=True)


class CreditorAccountOut(Schema):
    """`backend.billing.models.PaymentOrder`: the account a payout or refund pays."""

    id = fields.String(required=True)
    kind = fields.String(required=True, metadata=enum_of(PaymentKind))
    organizationId = fields.String(attribute="organization_id", required=True)
    creditorIban = fields.String(attribute="creditor_iban", allow_none=True)
    creditorName = fields.String(attribute="creditor_name", allow_none=True)
    creditorBic = fields.String(attribute="creditor_bic", allow_none=True,
                                metadata={"description": "the BIC approved with the IBAN, when one was given"})
    creditorApprovedAt = UtcDateTime(attribute="creditor_approved_at", allow_none=True,
                                     metadata={"description": "when an admin approved that account (KYB)"})


class RefreshedOut(Schema):
    paymentOrder = fields.Nested(CreditorAccountOut, required=True)


class BankFilesQuery(PageQuery):
    kind = fields.String(load_default=None, validate=validate.OneOf([k.value for k in BankFileKind]))
    sortBy = sort_by(SORTS, "createdAt")
    sortDir = fields.String(load_default="desc", validate=validate.OneOf(["asc", "desc"]))


BankFilePage = page_of(BankFileItemOut)
