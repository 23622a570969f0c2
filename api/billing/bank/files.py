"""The files for the bank (API.md "The bank"): make the direct debit and the credit transfer files,
list them, download one."""

from __future__ import annotations

from api.access import BILLING_MANAGER, Route
from api.operations import operation
from api.responses import private_attachment
from backend.billing.bank import files, transfers
from backend.billing.models import BankFile, BankFileKind
from backend.listing import ListParams, Page
from schemas.billing.bank.files import BankFileMadeOut, BankFilePage, BankFilesQuery, HeldListOut, RefreshedOut

TAGS = ("bank",)
_REFUSALS = ("Every order that can go is filed; the others are held back and answered in `held` with their "
             "reason (`kyb_not_approved`, `creditor_account_missing`, `bank_details_invalid` with `field` and "
             "`problem`, `mandate_ended`): they stay `unsent` and go in the first file after their reason is lifted. "
             "409 `CONFLICT` with `details.reason`: `nothing_due` when no order can go (`details.held` lists those "
             "held back; no file is made), `bank_not_configured` (`details.settings` names the setting missing or "
             "failing its check).")


class Make:
    def __init__(self, kind: BankFileKind, storage, config) -> None:
        self.kind, self.storage, self.config = kind, storage, config

    def _make(self, req) -> files.Made:
        return files.make_file(self.kind, storage=self.storage, config=self.config,
                               user_id=req.context.principal.user_id)


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
    def on_post(self, req, resp) -> files.Made:
        return self._make(req)


class Transfers(Make):
    @operation("Make the credit transfer file", description=(
        "`billing.manage.all`. Every supplier payout and refund (spec C `paid`, `settlement: unsent`) in one "
        "SEPA credit transfer initiation (pain.001.001.09) validated against its ISO 20022 schema, stored "
        "privately and audited, from the platform's IBAN, to the account each payment order recorded when it "
        "was made (the distributor's or industrial's account as approved at KYB, never the live profile; a "
        "direct-debit customer's mandate account when its approved profile has none); executed on the first "
        "TARGET2 day from today; end-to-end id = the payment "
        "order's id without dashes, remittance = the number of the invoice paid (self-billed invoice or credit "
        "note). Its payment orders become `in_file`. " + _REFUSALS),
        tags=TAGS, answer=BankFileMadeOut, status=201, errors={409: "nothing due, bank settings or details"})
    def on_post(self, req, resp) -> files.Made:
        return self._make(req)


class Held:
    @operation("Payment orders held back from the bank files", description=(
        "`billing.manage.all`. Every payment order due at the bank (`paid`, `unsent`) that the next file run "
        "would hold back, oldest first, with its reason (as the file routes answer it), kind, organization, "
        "reservation and amount. A held order goes into the first file after its reason is lifted."),
        tags=TAGS, answer=HeldListOut)
    def on_get(self, req, resp) -> dict:
        return {"items": files.held_orders()}


class HeldAccount:
    @operation("Refresh a held order's creditor account", description=(
        "`billing.manage.all`. An unsent payout or refund takes its creditor's account as approved now (the "
        "organization's KYB approved again since the order was made; the order otherwise keeps the account "
        "approved when it was made). Audited (`billing.bank.order.account_refreshed`, both IBANs masked). "
        "404 unknown order; 409 `not_a_held_transfer` (not an unsent payout or refund), `kyb_not_approved`."),
        tags=TAGS, answer=RefreshedOut)
    def on_post(self, req, resp, payment_order_id: str) -> dict:
        return {"paymentOrder": transfers.refresh_account(payment_order_id, user_id=req.context.principal.user_id)}


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
        Route(f"{base}/held", Held(), BILLING_MANAGER),
        Route(f"{base}/held/{{payment_order_id}}/account", HeldAccount(), BILLING_MANAGER),
        Route(f"{base}/files", Files(), BILLING_MANAGER),
        Route(f"{base}/files/{{file_id}}", File(deps.storage), BILLING_MANAGER),
    ]
