"""The files for the bank (API.md "The bank"): make the direct debit and the credit transfer files,
list them, download one."""

from __future__ import annotations

from api.access import BILLING_MANAGER, Route
from api.operations import operation
from api.responses import private_attachment
from backend.billing.bank import files
from backend.billing.models import BankFile, BankFileKind
from backend.listing import ListParams, Page
from schemas.billing.bank.files import BankFileMadeOut, BankFilePage, BankFilesQuery

TAGS = ("bank",)
_REFUSALS = ("409 `CONFLICT` with `details.reason`: `nothing_due` (no file is made), `bank_not_configured` "
             "(`details.settings` names the setting missing or failing its check), `bank_details_invalid` "
             "(`details.problems`: each payment order and field whose IBAN, BIC or mandate reference fails its "
             "check; nothing is written).")


class Make:
    def __init__(self, kind: BankFileKind, storage, config) -> None:
        self.kind, self.storage, self.config = kind, storage, config

    def _make(self, req) -> dict:
        return {"file": files.make_file(self.kind, storage=self.storage, config=self.config,
                                        user_id=req.context.principal.user_id)}


class DirectDebits(Make):
    @operation("Make the direct debit file", description=(
        "`billing.manage.all`. Every `sepa_dd` collection (spec C `paid`, `settlement: unsent`) in one SEPA Core "
        "direct debit initiation (pain.008.001.08) validated against its ISO 20022 schema, stored privately and "
        "audited: creditor identifier `PLATFORM_SEPA_CREDITOR_ID`, the platform's IBAN and BIC; each debit with "
        "the mandate reference (RUM) and signature date of the mandate the customer signed, FRST for a mandate's "
        "first debit and RCUR after (FRST again after 36 months unused), the first collection date TARGET2 "
        "allows, end-to-end id = the payment order's id without dashes, remittance = the invoice number. Its "
        "payment orders become `in_file`. A debit whose mandate has ended is held back (`unsent`). " + _REFUSALS),
        tags=TAGS, answer=BankFileMadeOut, status=201, errors={409: "nothing due, bank settings or details"})
    def on_post(self, req, resp) -> dict:
        return self._make(req)


class Transfers(Make):
    @operation("Make the credit transfer file", description=(
        "`billing.manage.all`. Every supplier payout and refund (spec C `paid`, `settlement: unsent`) in one "
        "SEPA credit transfer initiation (pain.001.001.09) validated against its ISO 20022 schema, stored "
        "privately and audited, from the platform's IBAN: a payout to the distributor's billing-profile IBAN, a "
        "refund to the industrial's; executed on the first TARGET2 day from today; end-to-end id = the payment "
        "order's id without dashes, remittance = the number of the invoice paid (self-billed invoice or credit "
        "note). Its payment orders become `in_file`. " + _REFUSALS),
        tags=TAGS, answer=BankFileMadeOut, status=201, errors={409: "nothing due, bank settings or details"})
    def on_post(self, req, resp) -> dict:
        return self._make(req)


class Files:
    @operation("Files for the bank, server-paginated", description=(
        "`billing.manage.all`. Filter `kind`; `search` on the message id; `sortBy` createdAt (default), kind, "
        "requestedOn, count, controlSumCents; `sortDir` desc by default."),
        tags=TAGS, query=BankFilesQuery, answer=BankFilePage, answer_description="a page of files")
    def on_get(self, req, resp, query: dict) -> Page:
        return files.list_files(ListParams.from_query(query), kind=query["kind"])


class File:
    def __init__(self, storage) -> None:
        self.storage = storage

    @operation("Download a file for the bank", description=(
        "`billing.manage.all`. The XML exactly as stored (its sha256 is the list's), as a private attachment "
        "`<schema>-<messageId>.xml`."), tags=TAGS, produces=files.CONTENT_TYPE)
    def on_get(self, req, resp, file_id: str) -> None:
        file: BankFile = files.get_file(file_id)
        private_attachment(resp, files.CONTENT_TYPE, files.file_name(file))
        resp.content_length = self.storage.size(files.STORAGE_CONTEXT, file.storage_key)
        resp.stream = self.storage.open(files.STORAGE_CONTEXT, file.storage_key)


def routes(deps) -> list[Route]:
    base = "/api/admin/billing/bank"
    return [
        Route(f"{base}/direct-debits", DirectDebits(BankFileKind.DIRECT_DEBIT, deps.storage, deps.config),
              BILLING_MANAGER),
        Route(f"{base}/transfers", Transfers(BankFileKind.CREDIT_TRANSFER, deps.storage, deps.config),
              BILLING_MANAGER),
        Route(f"{base}/files", Files(), BILLING_MANAGER),
        Route(f"{base}/files/{{file_id}}", File(deps.storage), BILLING_MANAGER),
    ]
