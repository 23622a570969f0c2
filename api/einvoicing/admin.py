"""E-invoicing admin (Specification C, "E-invoicing admin"): transmissions, reconciliation,
manual retry and resync. The operator client is built once with the app and passed in."""

from __future__ import annotations

from api.access import Route, admin
from api.responses import send
from backend.config import Config
from backend.einvoicing import lifecycle, reconciliation, views
from backend.einvoicing.operator_client import OperatorClient, build_operator_client
from backend.listing import ListParams
from schemas.einvoicing.transmissions import (
    TransmissionsQuery,
    transmission_detail_out,
    transmission_out,
)
from storage import Storage

BASE = "/api/admin/einvoicing"
ADMIN = admin()


class Transmissions:
    def on_get(self, req, resp) -> None:
        """Transmissions, server-paginated.
        ---
        summary: E-invoice transmissions (server-paginated)
        description: >
          Filters `status`, `flowType`, `documentKind` (each repeatable); `search` on the invoice number;
          `sortBy` createdAt (default), updatedAt, statusChangedAt, invoiceNumber, status, amountInclTaxCents;
          `sortDir` desc by default.
        tags: [admin einvoicing]
        parameters:
          - in: query
            schema: TransmissionsQuery
        responses:
          200:
            description: a page of transmissions
            content:
              application/json:
                schema: TransmissionPageEnvelope
        """
        query = TransmissionsQuery().load(req.params)
        page = views.list_transmissions(params=ListParams.from_query(query), statuses=query["status"],
                                        flow_types=query["flowType"], document_kinds=query["documentKind"])
        send(resp, page.as_dict(transmission_out))


class TransmissionResource:
    def __init__(self, client: OperatorClient, storage: Storage, config: Config) -> None:
        self._client = client
        self._storage = storage
        self._test_mode = config.e2e_test_mode

    def on_get(self, req, resp, transmission_id: str) -> None:
        """One transmission with the history of its statuses.
        ---
        summary: A transmission and every status change (time, trigger, actor, operator's answer)
        tags: [admin einvoicing]
        responses:
          200:
            description: the transmission
            content:
              application/json:
                schema: TransmissionDetailOutEnvelope
          404: {description: NOT_FOUND}
        """
        send(resp, transmission_detail_out(*views.transmission_with_history(transmission_id)))

    def on_post_retry(self, req, resp, transmission_id: str) -> None:
        """Retry a dispatch.
        ---
        summary: Dispatch again a transmission `failed` or `pending_dispatch` (runbook)
        description: >
          Posts the PDF to the operator now (after a search by trackingId when an earlier attempt was made)
          and answers the transmission (`sent`, or further when the operator already decided). Another
          status is 409 `CONFLICT`. When the dispatch fails again the transmission is `failed` with
          `lastErrorMessage`, and the answer is 409 `EINVOICE_MISSING_PDF` (no PDF) or 502
          `EINVOICE_PROVIDER_FAILED` (operator credentials, permission, refusal or outage).
        tags: [admin einvoicing]
        responses:
          200:
            description: the transmission after the dispatch
            content:
              application/json:
                schema: TransmissionOutEnvelope
          404: {description: NOT_FOUND}
          409: {description: CONFLICT (not retryable) or EINVOICE_MISSING_PDF}
          502: {description: EINVOICE_PROVIDER_FAILED}
        """
        transmission = lifecycle.retry(transmission_id, client=self._client, storage=self._storage,
                                       test_mode=self._test_mode, actor_user_id=req.context.principal.user_id)
        send(resp, transmission_out(transmission))

    def on_post_resync(self, req, resp, transmission_id: str) -> None:
        """Resync with the operator.
        ---
        summary: Ask the operator now where a non-terminal transmission stands (runbook)
        description: >
          `sent`: the flow's status (`Ok`/`Archived` acknowledge, `Error` rejects, `Pending` changes nothing).
          Other non-terminal statuses: a search by trackingId; a flow found there makes the transmission
          `sent`. A terminal transmission is 409 `CONFLICT`; an operator failure 502 `EINVOICE_PROVIDER_FAILED`.
        tags: [admin einvoicing]
        responses:
          200:
            description: the transmission after the resync
            content:
              application/json:
                schema: TransmissionOutEnvelope
          404: {description: NOT_FOUND}
          409: {description: CONFLICT (terminal)}
          502: {description: EINVOICE_PROVIDER_FAILED}
        """
        transmission = lifecycle.admin_resync(transmission_id, client=self._client,
                                              actor_user_id=req.context.principal.user_id)
        send(resp, transmission_out(transmission))


class Reconciliation:
    def __init__(self, config: Config) -> None:
        self._config = config

    def on_get(self, req, resp) -> None:
        """Reconciliation snapshot.
        ---
        summary: Transmissions per status, missing transmissions, provider failures and their alert levels
        description: >
          Kinds in scope: platform_sale, platform_credit_note (and the self-billed kinds when
          EINVOICING_SELF_BILLING_ENABLED). Levels: discrepancy_rate warning at 5 % or more, critical at
          15 % or more; provider_failed_backlog warning 5, critical 20; missing_transmission_backlog warning
          10, critical 30. `polling.inactive`: polling enabled and no pass for 30 minutes.
        tags: [admin einvoicing]
        responses:
          200:
            description: the snapshot
            content:
              application/json:
                schema: ReconciliationOutEnvelope
        """
        send(resp, reconciliation.snapshot(self._config))


def routes(deps) -> list[Route]:
    client = build_operator_client(deps.config)
    return [
        Route(f"{BASE}/transmissions", Transmissions(), ADMIN),
        Route(f"{BASE}/transmissions/{{transmission_id}}", TransmissionResource(client, deps.storage, deps.config),
              ADMIN),
        Route(f"{BASE}/transmissions/{{transmission_id}}/retry",
              TransmissionResource(client, deps.storage, deps.config), ADMIN, suffix="retry"),
        Route(f"{BASE}/transmissions/{{transmission_id}}/resync",
              TransmissionResource(client, deps.storage, deps.config), ADMIN, suffix="resync"),
        Route(f"{BASE}/reconciliation", Reconciliation(deps.config), ADMIN),
    ]
