"""E-invoicing admin (Specification C, "E-invoicing admin"): transmissions, reconciliation,
manual retry and resync. The operator client is built once with the app and passed in."""

from __future__ import annotations

from api.access import ADMIN, Route
from api.operations import operation
from backend.config import Config
from backend.einvoicing import lifecycle, reconciliation, views
from backend.einvoicing.models import Transmission
from backend.einvoicing.operator_client import OperatorClient
from backend.listing import ListParams, Page
from schemas.einvoicing.transmissions import (
    ReconciliationOut,
    TransmissionDetailOut,
    TransmissionOut,
    TransmissionPage,
    TransmissionsQuery,
)
from storage import Storage

BASE = "/api/admin/einvoicing"
TAGS = ("admin einvoicing",)


class Transmissions:
    @operation(
        "E-invoice transmissions, server-paginated",
        description=(
            "Filters `status`, `flowType`, `documentKind`, `lifecycleCode` (the latest lifecycle code; each "
            "repeatable); `attention=true`: the latest code is 207, 208, 210 or 213, or the deposit is held "
            "because the addressee is not in the operator's directory (`EINVOICE_RECIPIENT_UNKNOWN`), and the "
            "invoice is not yet credited in full (a 210 calls for a replacement invoice, a 213 for a corrected "
            "one deposited again: docs/einvoicing.md, runbook); `search` on the "
            "invoice number; `sortBy` createdAt (default), updatedAt, statusChangedAt, invoiceNumber, status, "
            "amountInclTaxCents; `sortDir` desc by default. Each item carries its `lifecycle`."
        ),
        tags=TAGS, query=TransmissionsQuery, answer=TransmissionPage, answer_description="a page of transmissions",
    )
    def on_get(self, req, resp, query: dict) -> Page:
        return views.list_transmissions(params=ListParams.from_query(query), statuses=query["status"],
                                        flow_types=query["flowType"], document_kinds=query["documentKind"],
                                        lifecycle_codes=query["lifecycleCode"], attention=query["attention"])


class TransmissionResource:
    def __init__(self, client: OperatorClient, storage: Storage, config: Config) -> None:
        self._client = client
        self._storage = storage
        self._test_mode = config.e2e_test_mode

    @operation(
        "A transmission, every status change (time, trigger, actor, operator's answer) and its lifecycle",
        tags=TAGS, answer=TransmissionDetailOut, answer_description="the transmission",
    )
    def on_get(self, req, resp, transmission_id: str) -> Transmission:
        return views.transmission_with_history(transmission_id)

    @operation(
        "Dispatch again a transmission `failed` or `pending_dispatch` (runbook)",
        description=(
            "Posts the PDF to the operator now (after a search by trackingId when an earlier attempt was made) "
            "and answers the transmission (`sent`, or further when the operator already decided). Another "
            "status is 409 `CONFLICT`. When the dispatch fails again, the transmission is `failed` with "
            "`lastErrorMessage` and the answer is 409 `EINVOICE_MISSING_PDF` (no PDF), 409 "
            "`EINVOICE_RECIPIENT_UNKNOWN` (the buyer's SIREN is not in the operator's directory) or 502 "
            "`EINVOICE_PROVIDER_FAILED` (operator credentials, permission, refusal or outage)."
        ),
        tags=TAGS, answer=TransmissionOut, answer_description="the transmission after the dispatch",
    )
    def on_post_retry(self, req, resp, transmission_id: str) -> Transmission:
        return views.with_lifecycle(lifecycle.retry(transmission_id, client=self._client, storage=self._storage,
                                                    test_mode=self._test_mode,
                                                    actor_user_id=req.context.principal.user_id))

    @operation(
        "Ask the operator now where a transmission stands (runbook)",
        description=(
            "`sent`: the flow's status (`Ok`/`Archived` acknowledge, `Error` rejects, `Pending` changes nothing) "
            "and its lifecycle statuses; `acknowledged`: its lifecycle statuses. `pending_dispatch`, "
            "`dispatching`, `failed`: a search by trackingId; a flow found there makes the transmission `sent`. "
            "`rejected` or `cancelled` is 409 `CONFLICT`; an operator failure 502 `EINVOICE_PROVIDER_FAILED`."
        ),
        tags=TAGS, answer=TransmissionOut, answer_description="the transmission after the resync",
    )
    def on_post_resync(self, req, resp, transmission_id: str) -> Transmission:
        return views.with_lifecycle(lifecycle.admin_resync(transmission_id, client=self._client,
                                                           actor_user_id=req.context.principal.user_id))


class Reconciliation:
    def __init__(self, config: Config) -> None:
        self._config = config

    @operation(
        "Transmissions per status, missing transmissions, provider failures and their alert levels",
        description=(
            "Kinds in scope: platform_sale, platform_credit_note (and the self-billed kinds when "
            "EINVOICING_SELF_BILLING_ENABLED). Levels: discrepancy_rate warning at 5 % or more, critical at "
            "15 % or more; provider_failed_backlog warning 5, critical 20; missing_transmission_backlog "
            "warning 10, critical 30; refused_backlog (latest lifecycle 210 or 213, invoice not credited) warning "
            "1, critical 5. E-reporting transmissions are counted apart (`eReportingByStatus`). "
            "`polling.inactive`: polling enabled and no pass for 30 minutes."
        ),
        tags=TAGS, answer=ReconciliationOut, answer_description="the snapshot",
    )
    def on_get(self, req, resp) -> dict:
        return reconciliation.snapshot(self._config)


def routes(deps) -> list[Route]:
    transmission = TransmissionResource(deps.operator, deps.storage, deps.config)
    return [
        Route(f"{BASE}/transmissions", Transmissions(), ADMIN),
        Route(f"{BASE}/transmissions/{{transmission_id}}", transmission, ADMIN),
        Route(f"{BASE}/transmissions/{{transmission_id}}/retry", transmission, ADMIN, suffix="retry"),
        Route(f"{BASE}/transmissions/{{transmission_id}}/resync", transmission, ADMIN, suffix="resync"),
        Route(f"{BASE}/reconciliation", Reconciliation(deps.config), ADMIN),
    ]
