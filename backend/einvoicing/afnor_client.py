"""HTTP client of an approved platform (PA) through the AFNOR XP Z12-013 APIs: the Flow Service
(annex A, "AFNOR Flow Service") and the Directory Service (annex B, "AFNOR Directory Service"),
in the version `afnor_openapi/` names. `EINVOICING_OPERATOR=afnor` chooses it instead of the
spec's operator; the rest of the e-invoicing area sees the same `OperatorClient`
(operator_client.py), with the same errors, the same retries on 429/503 (`Retry-After`), the
same OAuth client credentials and the same never-twice rule. docs/einvoicing.md "Choosing a
platform" says what differs; the parts of the standard this client uses are described in
`afnor_openapi/` (our own description of them, which the contract tests hold every request and
answer to).

- `POST /v1/flows`: multipart with `flowInfo` (a JSON part: `trackingId` (`tracking_id_for`: at
  most `TRACKING_ID_MAX` characters), `name`,
  `processingRule`, `flowSyntax`, `flowProfile` for an invoice, `sha256`) and `file`; `202` answers
  the `FullFlowInfo` (no acknowledgement yet: the flow is `Pending`). The standard's `FlowInfo`
  has no flow type: the PA derives it (a CDAR status message is `flowSyntax: CDAR`).
- `POST /v1/flows/search`: `{where, limit}` with at most `SEARCH_PAGE_SIZE` results, no offsets:
  the next page asks `updatedAfter` the latest `updatedAt` seen less `PAGE_OVERLAP` (flows sharing
  that instant are asked again and skipped once seen).
- `GET /v1/flows/{flowId}` (`docType=Metadata`: the `Flow`; `Original`: the file itself); a
  callback's flow is read again this way (`changes_of`, for `afnor_callbacks`).
- `GET /v1/directory-line/code:{addressingIdentifier}`: a line (200) or none (404).

The flow's `acknowledgement.status` is the spec's operator status (`Pending`, `Ok`, `Error`); the
error-level `details` give the rejection's message, and each detail's `reasonCode` is named in
`answer["errors"]` by the reform's reason (`REASONS`: the standard's own cross-reference, e.g.
`InvalidSchema` is `IRR_SYNTAX`), so an `Error` becomes the reform's 213 with that reason like an
`Error` of the spec's operator. A flow refused only as `AlreadyExistingFlow` is not a rejection:
the PA already holds the invoice, and that flow stands for the one it duplicates (its status and
its statuses). The lifecycle statuses of an invoice arrive as incoming CDAR flows
(`CustomerInvoiceLC`, direction `In`): each one is downloaded, read (`cdar_validation.check`) and
reported on the invoice's flow, found by its tracking id (the invoice number): by polling, and by
`get_flow` (a resync), which also reads the statuses received since the invoice's submission.

Every call carries `X-Request-Id`: the id of the request being served when it is a UUID (the
standard's format), else a new one, logged with the call.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from urllib.parse import quote

from backend import clock
from backend.config import Config
from backend.context import current_request_id
from backend.einvoicing import cdar_validation, reason_codes, reform_statuses
from backend.einvoicing.operator_client import (
    FLOW_SYNTAX,
    SEARCH_PAGE_SIZE,
    Flow,
    LifecycleStatus,
    OAuthOperatorClient,
    OperatorError,
    OperatorRejected,
    json_object,
    sha256_hex,
)
from backend.logs import get_logger

FLOWS_PATH = "/v1/flows"
SEARCH_PATH = "/v1/flows/search"
DIRECTORY_LINE_PATH = "/v1/directory-line/code:"
log = get_logger("einvoicing.operator")
# The flow profile of an invoice by its syntax: Vitrine's Factur-X is the BASIC profile.
FLOW_PROFILES = {"Factur-X": "Basic"}
LIFECYCLE_FLOW_TYPES = frozenset({"CustomerInvoiceLC", "SupplierInvoiceLC"})
ALREADY_EXISTING = "AlreadyExistingFlow"
PAGE_OVERLAP = timedelta(milliseconds=1)
TRACKING_ID_MAX = 36  # the standard's `NotOnlyUuid`
DIGEST_PREFIX = "h-"
# The standard's reason codes (annex A, `ReasonCodeEnum`) by the reform's reason each one cites.
REASONS = {
    "EmptyAttachement": "IRR_VID_PJ",
    "AttachmentTypeError": "IRR_EXT_DOC",
    "EmptyFlow": "IRR_VIDE_F",
    "OtherTechnicalError": "AUTRE",
    "InvalidSchema": "IRR_SYNTAX",
    "FileSizeExceeded": "IRR_TAILLE_F",
    "FlowTypeError": "IRR_TYPE_F",
    "VirusFound": "IRR_ANTIVIRUS",
}


class AfnorClient(OAuthOperatorClient):
    """An approved platform's XP Z12-013 Flow Service and Directory Service."""

    def __init__(self, *, flow_url: str, directory_url: str, token_url: str, client_id: str | None,
                 client_secret: str | None, scope: str | None = None, **kwargs) -> None:
        super().__init__(base_url=flow_url, token_url=token_url, client_id=client_id, client_secret=client_secret,
                         scope=scope or "", **kwargs)
        self.directory_url = directory_url.rstrip("/")

    @classmethod
    def from_config(cls, config: Config, **kwargs) -> AfnorClient:
        return cls(flow_url=config.afnor_flow_url, directory_url=config.afnor_directory_url,
                   token_url=config.afnor_token_url, client_id=config.afnor_client_id,
                   client_secret=config.afnor_client_secret, scope=config.afnor_scope, **kwargs)

    def __repr__(self) -> str:  # never the secret nor the token
        return f"AfnorClient({self.base_url!r})"

    @property
    def missing_identity(self) -> list[str]:
        names = (("AFNOR_CLIENT_ID", self.client_id), ("AFNOR_CLIENT_SECRET", self._client_secret))
        return [name for name, value in names if not value]

    def _headers(self) -> dict[str, str]:
        request_id = current_request_id()
        try:
            return {"X-Request-Id": str(uuid.UUID(request_id or ""))}
        except ValueError:
            return {"X-Request-Id": str(uuid.uuid4())}

    # --- the Flow Service ---------------------------------------------------------------------

    def submit_flow(self, *, tracking_id: str, name: str, content: bytes, processing_rule: str = "B2B",
                    flow_syntax: str = FLOW_SYNTAX, content_type: str = "application/pdf",
                    flow_type: str | None = None) -> Flow:
        """Post a flow (the invoice's Factur-X PDF by default, or a CDAR status message); returns
        it as the PA answered (`Pending`), or the flow the PA already holds for this tracking id
        after a post whose outcome was unknown. `flow_type` is not sent: the PA derives it."""
        self._check_identity()
        tracking_id = tracking_id_for(tracking_id)
        info = {"trackingId": tracking_id, "name": name, "processingRule": processing_rule,
                "flowSyntax": flow_syntax, "sha256": sha256_hex(content)}
        if flow_syntax in FLOW_PROFILES:
            info["flowProfile"] = FLOW_PROFILES[flow_syntax]
        flow_info = json.dumps(info, separators=(",", ":"))

        def post() -> Flow:
            # `flowInfo` is a JSON part (the standard's encoding), without a file name.
            response = self._send("POST", FLOWS_PATH, files={
                "flowInfo": (None, flow_info, "application/json"), "file": (name, content, content_type)})
            return self._flow(json_object(response))

        return self._post_once(tracking_id, post, what=f"POST {FLOWS_PATH}")

    def find_by_tracking_id(self, tracking_id: str) -> Flow | None:
        """The flow of this tracking id (the latest submitted when there are several), or None. A
        result with another tracking id (a PA ignoring the filter) is never adopted."""
        return self._original(tracking_id_for(tracking_id))

    def get_flow(self, flow_id: str) -> Flow | None:
        """The flow (`docType=Metadata`) with the statuses received for it since its submission."""
        item = self._metadata(flow_id)
        flow = self._flow(item) if item is not None else None
        if flow is None or flow.answer.get("flowDirection") == "In" or flow.lifecycle:
            return flow
        return replace(flow, lifecycle=self._statuses_since(flow))

    def changes_of(self, flow_id: str) -> list[Flow]:
        """What a callback about this flow says, read from the PA (`docType=Metadata`), never from
        the callback's body: as a page of the polling search reads it (an invoice flow with its
        acknowledgement, or an incoming status on the flow of the invoice it names); empty when
        the PA does not know the flow."""
        item = self._metadata(flow_id)
        return self._page([item]) if item is not None else []

    def _metadata(self, flow_id: str) -> dict | None:
        """The PA's `Flow` of this id, None when it answers 404 (or another flow)."""
        self._check_identity()
        path = f"{FLOWS_PATH}/{quote(flow_id, safe='')}"

        def attempt() -> dict | None:
            try:
                item = json_object(self._send("GET", path, params={"docType": "Metadata"}))
            except OperatorRejected as exc:
                if exc.status == 404:
                    return None
                raise
            return item if item.get("flowId") == flow_id else None

        return self._retrying(attempt, what=f"GET {FLOWS_PATH}/{{flowId}}")

    def changed_pages(self, *, updated_after: str) -> Iterator[list[Flow]]:
        """The flows changed after `updated_after`, one page per search, paged by `updatedAfter`
        (the standard has no offsets); a flow's incoming lifecycle statuses are merged into it."""
        for items in self._pages({"updatedAfter": updated_after}):
            yield self._page(items)

    def _pages(self, where: dict) -> Iterator[list[dict]]:
        """The flows `where` selects, changed after its `updatedAfter`, one list per search: the
        next search asks after the latest `updatedAt` of the page less `PAGE_OVERLAP`, and a flow
        already seen at that `updatedAt` is not given again."""
        since, seen = where["updatedAfter"], set()
        while True:
            items = self._search({**where, "updatedAfter": since}, limit=SEARCH_PAGE_SIZE)
            fresh = [item for item in items if _seen_key(item) not in seen]
            seen.update(_seen_key(item) for item in fresh)
            yield fresh
            if len(items) < SEARCH_PAGE_SIZE:
                return
            latest = max((at for item in items if (at := reform_statuses.parse_at(str(item.get("updatedAt") or "")))),
                         default=None)
            if latest is None:
                raise OperatorError("the platform answered a full page of flows without updatedAt")
            # A page of flows all seen already (as many flows changed within the overlap as a
            # page holds): the next page starts after them, so the search ends.
            since = clock.iso(latest - PAGE_OVERLAP if fresh else latest)

    # --- the Directory Service ----------------------------------------------------------------

    def recipient_registered(self, siren: str) -> bool:
        """Whether the directory has a line whose addressing identifier is this SIREN."""
        self._check_identity()
        path = DIRECTORY_LINE_PATH + quote(siren, safe="")

        def attempt() -> bool:
            try:
                answer = json_object(self._send("GET", path, base_url=self.directory_url))
            except OperatorRejected as exc:
                if exc.status == 404:
                    return False
                raise
            return answer.get("addressingIdentifier") == siren

        return self._retrying(attempt, what=f"GET {DIRECTORY_LINE_PATH}{{addressingIdentifier}}")

    # --- reading the Flow Service's answers ---------------------------------------------------

    def _search(self, where: dict, *, limit: int) -> list[dict]:
        self._check_identity()
        body = {"where": where, "limit": limit}

        def attempt() -> list[dict]:
            answer = json_object(self._send("POST", SEARCH_PATH, json=body))
            results = answer.get("results")
            if not isinstance(results, list):
                raise OperatorError("the platform answered a search without results", answer=answer)
            return [item for item in results if isinstance(item, dict)]

        return self._retrying(attempt, what=f"POST {SEARCH_PATH}")

    def _original(self, tracking_id: str) -> Flow | None:
        """The latest flow of this exact tracking id the PA did not refuse as a duplicate."""
        items = [item for item in self._search({"trackingId": tracking_id}, limit=SEARCH_PAGE_SIZE)
                 if item.get("trackingId") == tracking_id and not _duplicate(item)]
        items.sort(key=lambda item: str(item.get("submittedAt") or ""))
        return self._flow(items[-1], resolve_duplicate=False) if items else None

    def _flow(self, item: dict, *, resolve_duplicate: bool = True) -> Flow:
        """The PA's flow as the e-invoicing area reads a flow (see the module's docstring)."""
        flow_id = item.get("flowId")
        if not isinstance(flow_id, str) or not flow_id:
            raise OperatorError("the platform answered a flow without flowId", answer=item)
        tracking_id = item.get("trackingId") if isinstance(item.get("trackingId"), str) else None
        acknowledgement = item.get("acknowledgement") if isinstance(item.get("acknowledgement"), dict) else {}
        status = acknowledgement.get("status") or "Pending"
        errors = [detail for detail in _details(acknowledgement) if detail.get("level") == "Error"]
        answer = {**item, "errors": [{"code": _reason(detail.get("reasonCode")), "message": detail.get("reasonMessage"),
                                      "reasonCode": detail.get("reasonCode")} for detail in errors]}
        message = "; ".join(str(detail.get("reasonMessage")) for detail in errors if detail.get("reasonMessage"))
        if resolve_duplicate and _duplicate(item) and tracking_id:
            original = self._original(tracking_id)
            log.info("a flow refused as already existing stands for the original",
                     extra={"fields": {"trackingId": tracking_id, "flowId": flow_id,
                                       "originalFlowId": original.flow_id if original else None}})
            return Flow(flow_id=flow_id, tracking_id=tracking_id, status=original.status if original else "Pending",
                        answer=answer, lifecycle=original.lifecycle if original else ())
        return Flow(flow_id=flow_id, tracking_id=tracking_id, status=status, error_message=message or None,
                    answer=answer)

    def _page(self, items: list[dict]) -> list[Flow]:
        """A search page as flows: an incoming lifecycle flow becomes a status of its invoice's
        flow; two entries for one flow are merged (its statuses kept, the invoice flow's status)."""
        flows: dict[str, Flow] = {}
        for item in items:
            if _incoming_status(item):
                flow = self._status_of(item)
                if flow is None:
                    continue
            else:
                flow = self._flow(item)
            known = flows.get(flow.flow_id)
            if known is not None:
                lifecycle = known.lifecycle + tuple(s for s in flow.lifecycle if s not in known.lifecycle)
                # The invoice flow's own entry is the base; a status's entry adds its status, and
                # its change time when later (the next search starts after both).
                base = known if "lifecycleFlowId" in flow.answer else flow
                updated_at = max(str(known.answer.get("updatedAt") or ""), str(flow.answer.get("updatedAt") or ""))
                flow = replace(base, lifecycle=lifecycle, answer={**base.answer, "updatedAt": updated_at})
            flows[flow.flow_id] = flow
        return list(flows.values())

    def _status_of(self, item: dict) -> Flow | None:
        """An incoming CDAR flow: its status, on the flow of the invoice it names; None when the
        message cannot be read or names an invoice this platform did not deposit."""
        said = self._read_status(item)
        invoice = self._original(said[0]) if said is not None else None
        if invoice is None or said is None:
            return None
        updated_at = max(str(invoice.answer.get("updatedAt") or ""), str(item.get("updatedAt") or ""))
        return replace(invoice, lifecycle=(said[1],),
                       answer={**invoice.answer, "lifecycleFlowId": item.get("flowId"), "updatedAt": updated_at})

    def _read_status(self, item: dict) -> tuple[str, LifecycleStatus] | None:
        """An incoming CDAR flow, downloaded and read: (the tracking id of the invoice it names, its
        status); None when it is not a valid lifecycle message."""
        lifecycle_flow_id = str(item.get("flowId") or "")
        path = f"{FLOWS_PATH}/{quote(lifecycle_flow_id, safe='')}"

        def download() -> bytes:
            return self._send("GET", path, params={"docType": "Original"}).content

        try:
            said = cdar_validation.check(self._retrying(download, what=f"GET {FLOWS_PATH}/{{flowId}}"))
        except cdar_validation.CdarInvalid as exc:
            log.warning("an incoming lifecycle flow is not a valid CDAR message: skipped",
                        extra={"fields": {"flowId": lifecycle_flow_id, "error": str(exc)[:300]}})
            return None
        if not said.get("invoiceNumber") or type(said.get("code")) is not int:
            return None
        reason = " ".join(part for part in (said.get("reasonCode"), said.get("reason")) if part) or None
        return tracking_id_for(said["invoiceNumber"]), LifecycleStatus(
            code=said["code"], at=said.get("at") or str(item.get("updatedAt") or ""), reason=reason)

    def _statuses_since(self, flow: Flow) -> tuple[LifecycleStatus, ...]:
        """The statuses of this invoice's flow received since it was submitted (the incoming CDAR
        flows naming it): what a resync brings between two polling passes."""
        since = str(flow.answer.get("submittedAt") or "")
        if flow.tracking_id is None or reform_statuses.parse_at(since) is None:
            return ()
        where = {"updatedAfter": since, "flowDirection": ["In"], "flowType": sorted(LIFECYCLE_FLOW_TYPES)}
        statuses: list[LifecycleStatus] = []
        for items in self._pages(where):
            for item in filter(_incoming_status, items):
                said = self._read_status(item)
                if said is not None and said[0] == flow.tracking_id and said[1] not in statuses:
                    statuses.append(said[1])
        return tuple(statuses)


def tracking_id_for(tracking_id: str) -> str:
    """The `trackingId` the PA is given: ours when it fits the standard's `NotOnlyUuid`
    (`TRACKING_ID_MAX` characters; an invoice number does), else a digest of it (a status
    message's key: the invoice number and more), the same each time, so the never-twice search
    finds it."""
    if len(tracking_id) <= TRACKING_ID_MAX:
        return tracking_id
    return DIGEST_PREFIX + sha256_hex(tracking_id.encode())[:TRACKING_ID_MAX - len(DIGEST_PREFIX)]


def _incoming_status(item: dict) -> bool:
    """A lifecycle status another party sent about an invoice (a CDAR flow coming in)."""
    return item.get("flowDirection") == "In" and item.get("flowType") in LIFECYCLE_FLOW_TYPES


def _details(acknowledgement: dict) -> list[dict]:
    details = acknowledgement.get("details")
    return [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []


def _duplicate(item: dict) -> bool:
    """A flow the PA refused only because it already holds the same one (`AlreadyExistingFlow`)."""
    acknowledgement = item.get("acknowledgement") if isinstance(item.get("acknowledgement"), dict) else {}
    errors = [d for d in _details(acknowledgement) if d.get("level") == "Error"]
    return acknowledgement.get("status") == "Error" and bool(errors) and all(
        d.get("reasonCode") == ALREADY_EXISTING for d in errors)


def _reason(code: object) -> str | None:
    """The reform's reason for one of the standard's codes; a code already in the reform's list
    (the standard lets a PA extend its list) is kept; None for any other."""
    if not isinstance(code, str):
        return None
    return REASONS.get(code) or (code if code in reason_codes.LABELS else None)


def _seen_key(item: dict) -> tuple[str, str]:
    return str(item.get("flowId")), str(item.get("updatedAt"))
