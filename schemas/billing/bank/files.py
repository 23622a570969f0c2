"""Shapes of the files for the bank (API.md "The bank")."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend.billing.bank.files import SORTS
from backend.billing.models import BankFileKind, BankFileStatus
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


class BankFileMadeOut(Schema):
    file = fields.Nested(BankFileOut, required=True)


class BankFilesQuery(PageQuery):
    kind = fields.String(load_default=None, validate=validate.OneOf([k.value for k in BankFileKind]))
    sortBy = sort_by(SORTS, "createdAt")
    sortDir = fields.String(load_default="desc", validate=validate.OneOf(["asc", "desc"]))


BankFilePage = page_of(BankFileItemOut)
