"""Bank statements in and the unmatched queue (API.md "The bank"; docs/bank.md)."""

from __future__ import annotations

import sys

from api.access import BILLING_MANAGER, Route
from api.operations import Answer, operation
from backend.billing.bank import camt, statements, waiting
from backend.errors import UnsupportedMediaType
from schemas.billing.bank.statements import (
    BankPageQuery,
    LineResolveAnswer,
    LineResolveIn,
    MatchAnswer,
    MatchIn,
    StatementAnswer,
    UnmatchedOut,
)

XML = "application/xml"
XML_TYPES = (XML, "text/xml")


class Statements:
    # The body limit is the statement's own (`camt.MAX_DOCUMENT_BYTES`), answered as a refused
    # statement (400 `too_large`) rather than by the JSON limit of the middleware.
    max_body_bytes = sys.maxsize

    def __init__(self, config) -> None:
        self._config = config

    @operation("Import a bank statement (camt.053 or camt.054)",
               description="`billing.manage.all`. The body is the XML document, at most 32 MiB. Each booked line is "
               "matched: a credit by the end-to-end id of a debit or an invoice number in its remittance with the "
               "exact amount (the payment order `settled`, with the booking date), a returned debit (reason code) "
               "moves its order to `failed` and the reservation back to `reservation_total_due`, the rest waits in "
               "the unmatched queue. 201 with the counts; the same statement again changes nothing and answers 200 "
               "with the same counts. 400 `VALIDATION_ERROR` with `details.reason` (`too_large`, `not_xml`, `dtd`, "
               "`not_camt`, `several_statements`, `malformed`, `currency`, `account`, `control_sum`) refuses the "
               "whole document; 415 `UNSUPPORTED_MEDIA_TYPE` unless `Content-Type` is `application/xml` or "
               "`text/xml`. Read as a stream: memory stays flat whatever the document's size.",
               tags=("bank",), consumes=XML_TYPES, answer=StatementAnswer, status=201,
               other_answers={200: (StatementAnswer, "the statement was already imported: nothing changed")})
    def on_post(self, req, resp) -> Answer:
        media_type = (req.content_type or "").split(";")[0].strip().lower()
        if media_type not in XML_TYPES:
            raise UnsupportedMediaType("send the statement as Content-Type: application/xml (or text/xml)",
                                       contentType=req.content_type)
        if (req.content_length or 0) > camt.MAX_DOCUMENT_BYTES:
            raise camt.refused("too_large", f"the document exceeds {camt.MAX_DOCUMENT_BYTES} bytes")
        imported = statements.import_statement(req.bounded_stream, config=self._config,
                                               user_id=req.context.principal.user_id)
        return Answer({"statement": imported}, 201 if imported.created else 200)


class Unmatched:
    @operation("List the statement lines waiting to be matched",
               description="`billing.manage.all`. Oldest booking first.",
               tags=("bank",), query=BankPageQuery, answer=UnmatchedOut)
    def on_get(self, req, resp, query: dict):
        return statements.unmatched(page=query["page"], page_size=query["pageSize"])


class Match:
    @operation("Match a waiting statement line with a payment order",
               description="`billing.manage.all`. The line settles the payment order (or returns it, for a returned "
               "debit) under the automatic rules: same amount, a credit for a collection and a debit for a payout "
               "or refund, the order still waiting for the bank. 404 for an unknown line or order; 409 `line_matched` "
               "or `line_mismatch`.",
               tags=("bank",), body=MatchIn, answer=MatchAnswer)
    def on_post(self, req, resp, line_id: str, body: dict) -> dict:
        return {"line": statements.match_line(line_id, payment_order_id=body["paymentOrderId"],
                                              user_id=req.context.principal.user_id)}


class Resolve:
    @operation("Settle a waiting statement line otherwise than by a match",
               description="`billing.manage.all`. `how`: `refunded` (the money went back to the payer; "
               "`otherLineId` names the bank's debit line that paid it back, unmatched, of the same amount: both "
               "leave the queue and the waiting account 471 together) or `applied` (a credit applied to the sale "
               "invoice `invoiceNumber`: 471 against the customer's 411). `note` says how. 404 for an unknown "
               "line or invoice; 409 `line_matched` (matched or settled already) or `line_mismatch`.",
               tags=("bank",), body=LineResolveIn, answer=LineResolveAnswer)
    def on_post(self, req, resp, line_id: str, body: dict) -> dict:
        return {"resolution": waiting.resolve_line(
            line_id, how=body["how"], note=body["note"], other_line_id=body["otherLineId"],
            invoice_number=body["invoiceNumber"], user_id=req.context.principal.user_id)}


def routes(deps) -> list[Route]:
    return [
        Route("/api/admin/billing/bank/statements", Statements(deps.config), BILLING_MANAGER),
        Route("/api/admin/billing/bank/unmatched", Unmatched(), BILLING_MANAGER),
        Route("/api/admin/billing/bank/unmatched/{line_id}/match", Match(), BILLING_MANAGER),
        Route("/api/admin/billing/bank/unmatched/{line_id}/resolve", Resolve(), BILLING_MANAGER),
    ]
