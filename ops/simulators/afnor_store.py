"""State of the AFNOR XP Z12-013 platform simulator: the Flow Service's flows and the Directory
Service's lines, with the spec operator simulator's tokens, fault switches, settings and counters
(`odp_store`: the same switches, the same meaning).

A flow posted is `Pending`; it becomes `Ok` by itself once `auto_ok_after_seconds` have passed
(None: never by itself), or `Ok` or `Error` (with a detail: reason code and message) through a
control action. A file whose `sha256` is not the one declared is acknowledged `Error`
`ChecksumMismatch`; with `reject_duplicates`, a second flow of a tracking id is acknowledged
`Error` `AlreadyExistingFlow` (the standard has no 409). A lifecycle status of an invoice
(`add_lifecycle`) is an incoming CDAR flow (`CustomerInvoiceLC`, direction `In`) whose original
file is the CDAR message saying it. Every change moves the flow's `updatedAt`, which the search's
`updatedAfter` reads; a search answers in `updatedAt` order.

With a callback subscription (`subscribe`: the subscriber's base URL and the HMAC secret), every
change of a flow (acknowledged, refused, an incoming status) queues a callback, annex A's
`WebhookCallbackContent` (`{"flowInfo": <Flow>}`), posted to `<url>/api/webhooks/afnor`, signed
as Vitrine expects (`backend.einvoicing.afnor_callbacks`). `take_callbacks` hands the queued ones
over with the callback fault switches applied (`CallbackFaults`: a delivery lost, duplicated, or
badly signed); `deliveries` records what each delivery was and how it was answered.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, date, datetime

from backend import webhook_signature
from backend.einvoicing import cdar, cdar_validation, reason_codes, reform_statuses
from backend.einvoicing.afnor_callbacks import ISSUED_AT_HEADER, SIGNATURE_HEADER
from ops.simulators.odp_store import Faults, OperatorError, Settings, Store, _iso, _ms, _parse_time

FLOW_SYNTAXES = ("CII", "UBL", "Factur-X", "CDAR", "FRR")
INVOICE_SYNTAXES = ("Factur-X", "CII", "UBL")
PROCESSING_RULES = ("B2B", "B2BInt", "B2C", "OutOfScope", "ArchiveOnly", "NotApplicable")
FLOW_PROFILES = ("Basic", "CIUS", "Extended-CTC-FR")
SEARCH_CRITERIA = ("updatedAfter", "updatedBefore", "processingRule", "flowType", "flowDirection", "trackingId",
                   "ackStatus")
XML_TYPES = ("application/xml", "text/xml")
BUYER_PLATFORM = cdar.Party(siren="552100554", name="Plateforme du destinataire (simulée)", role="WK")
# The reason code given a status that needs one when the control route names none: the first of
# these the reform admits for that status (a 210 admits no `AUTRE`).
DEFAULT_REASONS = ("AUTRE", reason_codes.DEFAULT_CONTEST, reason_codes.DEFAULT_REJECTION)
CALLBACK_PATH = "/api/webhooks/afnor"


@dataclass
class CallbackFaults(Faults):
    """The operator simulator's switches, and the callbacks' own."""

    lost_callbacks: int = 0  # the next N callbacks are never delivered
    duplicate_callbacks: int = 0  # the next N callbacks are delivered twice
    bad_signature_callbacks: int = 0  # the next N callbacks are signed with another secret


@dataclass(frozen=True)
class Delivery:
    """One callback to post: where, the body, its headers (signature and issue time)."""

    url: str
    body: bytes
    headers: dict


class AfnorStore(Store):
    def __init__(self, *, client_id: str, client_secret: str, settings: Settings | None = None,
                 callback_url: str | None = None, callback_secret: str | None = None) -> None:
        super().__init__(client_id=client_id, client_secret=client_secret, entity_id=None, settings=settings)
        self.faults = CallbackFaults()
        self.calls = {"token": 0, "submit": 0, "search": 0, "get": 0, "directory": 0}
        self._numbers = itertools.count(1)
        self._subscription = (callback_url, callback_secret)  # what a reset comes back to
        self.callback_url, self.callback_secret = callback_url, callback_secret
        self._queued: list[dict] = []
        self.deliveries: list[dict] = []  # {url, body, headers, status}, in order

    # --- callbacks ------------------------------------------------------------------------------

    def subscribe(self, url: object, secret: object) -> None:
        """Callbacks to `<url>/api/webhooks/afnor`, signed with `secret`; a null url: none."""
        if url is not None and (not isinstance(url, str) or not url.startswith(("http://", "https://"))):
            raise OperatorError(400, "url is an http(s) URL, or null")
        if url is not None and (not isinstance(secret, str) or not secret):
            raise OperatorError(400, "secret (a non-empty string) is required with a url")
        self.callback_url = url.rstrip("/") if isinstance(url, str) else None
        self.callback_secret = secret if url is not None else None

    def _changed(self, flow: dict) -> None:
        if self.callback_url:
            self._queued.append(self._public(flow))

    def take_callbacks(self) -> list[Delivery]:
        """The callbacks queued since the last call, as deliveries, the fault switches applied."""
        queued, self._queued = self._queued, []
        deliveries = []
        for flow in queued:
            if not self.callback_url or not self.callback_secret:
                break
            if self.faults.lost_callbacks > 0:
                self.faults.lost_callbacks -= 1
                continue
            secret = self.callback_secret
            if self.faults.bad_signature_callbacks > 0:
                self.faults.bad_signature_callbacks -= 1
                secret = "not-" + secret
            body = json.dumps({"flowInfo": flow}).encode()
            delivery = Delivery(url=self.callback_url + CALLBACK_PATH, body=body, headers={
                "Content-Type": "application/json", SIGNATURE_HEADER: webhook_signature.signature_of(body, secret),
                ISSUED_AT_HEADER: str(int(time.time()))})
            copies = 1
            if self.faults.duplicate_callbacks > 0:
                self.faults.duplicate_callbacks -= 1
                copies = 2
            deliveries.extend([delivery] * copies)
        return deliveries

    def delivered(self, delivery: Delivery, status: int | str) -> None:
        self.deliveries.append({"url": delivery.url, "body": delivery.body.decode(), "headers": delivery.headers,
                                "status": status})

    # --- the Flow Service -----------------------------------------------------------------------

    def submit(self, *, flow_info: dict, content_type: str, content: bytes) -> dict:  # type: ignore[override]
        """A flow posted: its `FullFlowInfo` (the body of the acceptance answer)."""
        unknown = sorted(set(flow_info) - {"trackingId", "name", "processingRule", "flowSyntax", "flowProfile",
                                           "sha256"})
        if unknown:
            raise OperatorError(400, "flowInfo has properties the standard does not define: " + ", ".join(unknown))
        syntax = flow_info.get("flowSyntax")
        if syntax not in FLOW_SYNTAXES:
            raise OperatorError(400, "flowInfo.flowSyntax must be one of " + ", ".join(FLOW_SYNTAXES))
        rule = flow_info.get("processingRule", "B2B")
        if rule not in PROCESSING_RULES or flow_info.get("flowProfile", "Basic") not in FLOW_PROFILES:
            raise OperatorError(400, "flowInfo.processingRule or flowInfo.flowProfile is not the standard's")
        if not content:
            raise OperatorError(422, "the file is empty")
        report = None
        if syntax == "CDAR":
            if content_type not in XML_TYPES:
                raise OperatorError(422, "a CDAR flow is an XML file")
            try:
                report = cdar_validation.check(content)
            except cdar_validation.CdarInvalid as exc:
                raise OperatorError(422, f"invalid CDAR message: {exc}") from None
        elif syntax == "Factur-X" and (content_type != "application/pdf" or not content.startswith(b"%PDF-")):
            raise OperatorError(422, "a Factur-X flow is a PDF (application/pdf)")
        now = time.time()
        flow = {"flowId": f"afnor-{next(self._numbers):06d}-{secrets.token_hex(4)}",
                "trackingId": flow_info.get("trackingId"), "name": flow_info.get("name"), "processingRule": rule,
                "flowSyntax": syntax, "flowProfile": flow_info.get("flowProfile"),
                "flowType": "CustomerInvoiceLC" if syntax == "CDAR" else "CustomerInvoice", "flowDirection": "Out",
                "sha256": flow_info.get("sha256") or hashlib.sha256(content).hexdigest(),
                "ack": {"status": "Pending"}, "content": content, "contentType": content_type,
                "submittedAt": now, "updatedAt": now, "statusReport": report}
        if flow_info.get("sha256") and flow_info["sha256"] != hashlib.sha256(content).hexdigest():
            flow["ack"] = _error("ChecksumMismatch", "the file's sha256 is not the one declared in flowInfo")
        elif self.settings.reject_duplicates and flow["trackingId"] and any(
                other["trackingId"] == flow["trackingId"] and other["flowDirection"] == "Out"
                for other in self.flows.values()):
            flow["ack"] = _error("AlreadyExistingFlow", "a flow with this trackingId was already received")
        self.flows[flow["flowId"]] = flow
        return {key: value for key, value in {
            "flowId": flow["flowId"], "submittedAt": _iso(now), "trackingId": flow["trackingId"],
            "name": flow["name"], "processingRule": rule, "flowSyntax": syntax,
            "flowProfile": flow["flowProfile"], "sha256": flow["sha256"]}.items() if value is not None}

    def search_flows(self, body: dict) -> dict:
        where, limit = body.get("where"), body.get("limit", 25)
        if not isinstance(where, dict) or not where or set(where) - set(SEARCH_CRITERIA):
            raise OperatorError(400, "where needs at least one of the standard's criteria, and no other")
        if type(limit) is not int or not 1 <= limit <= 100:
            raise OperatorError(400, "limit is within [1, 100]")
        bounds = {}
        for key in ("updatedAfter", "updatedBefore"):
            if key in where and (bounds.setdefault(key, _parse_time(where[key])) is None):
                raise OperatorError(400, f"{key} must be an ISO 8601 date-time")
        flows = [self._progress(flow) for flow in self.flows.values()]
        if not self.faults.search_ignores_filters:
            flows = [flow for flow in flows if _matches(flow, where, bounds)]
        flows.sort(key=lambda flow: (_ms(flow["updatedAt"]), flow["flowId"]))
        return {"limit": limit, "filters": where, "results": [self._public(flow) for flow in flows[:limit]]}

    def get_flow(self, flow_id: str) -> dict:
        flow = self.flows.get(flow_id)
        if flow is None:
            raise OperatorError(404, "Requested resource is Not Found")
        return self._progress(flow)

    def act(self, flow_id: str, action: str, message: str | None = None, code: str | None = None) -> dict:
        flow = self.get_flow(flow_id)
        flow["ack"] = {"status": "Ok"} if action == "ok" else _error(
            code or "VALIDATION_FAILED", message or "rejected by the platform")
        flow["updatedAt"] = max(time.time(), flow["updatedAt"] + 0.001)
        self._changed(flow)
        return self._public(flow)

    def add_lifecycle(self, flow_id: str, code: object, reason: object, reason_code: object = None) -> dict:
        """The invoice flow's status `code` as the PA receives it: an incoming CDAR flow."""
        invoice = self.get_flow(flow_id)
        if type(code) is not int or code not in reform_statuses.LABELS:
            raise OperatorError(400, "code must be one of " + ", ".join(map(str, reform_statuses.LABELS)))
        if reason is not None and not isinstance(reason, str):
            raise OperatorError(400, "reason must be a string")
        if code in reform_statuses.REASON_REQUIRED and not isinstance(reason_code, str):
            reason_code = default_reason(code)
        now = max(time.time(), invoice["updatedAt"] + 0.001)
        moment = datetime.fromtimestamp(now, tz=UTC)
        message = cdar.StatusMessage(
            message_id=f"CDV-{secrets.token_hex(6)}", invoice_number=str(invoice["trackingId"]),
            invoice_type_code="380", invoice_issued_on=date.today(), invoice_issuer_siren=None, code=code,
            at=moment, created_at=moment, issuer=BUYER_PLATFORM, recipients=(cdar.PUBLIC_PORTAL,),
            reason_code=reason_code if isinstance(reason_code, str) else None, reason=reason,
            received=(cdar.Received(amount_cents=100, vat_rate_bps=2000),)
            if code == reform_statuses.ENCAISSEE else ())
        content = cdar.build(message)
        flow = {"flowId": f"afnor-{next(self._numbers):06d}-{secrets.token_hex(4)}", "trackingId": None,
                "name": f"{message.message_id}.xml", "processingRule": "B2B", "flowSyntax": "CDAR",
                "flowProfile": None, "flowType": "CustomerInvoiceLC", "flowDirection": "In",
                "sha256": hashlib.sha256(content).hexdigest(), "ack": {"status": "Ok"}, "content": content,
                "contentType": "application/xml", "submittedAt": now, "updatedAt": now}
        self.flows[flow["flowId"]] = flow
        self._changed(flow)
        return self._public(flow)

    def flows_for(self, tracking_id: str | None, flow_type: str | None = None) -> list[dict]:
        """The flows, as the API shows them; a status the platform sent also shows what its CDAR
        message says (`statusReport`, as the operator simulator's)."""
        return [{**self._public(self._progress(flow)),
                 **({"statusReport": flow["statusReport"]} if flow.get("statusReport") else {})}
                for flow in self.flows.values()
                if (tracking_id is None or flow["trackingId"] == tracking_id)
                and (flow_type is None or flow["flowType"] == flow_type)]

    def _progress(self, flow: dict) -> dict:
        delay = self.settings.auto_ok_after_seconds
        if flow["ack"]["status"] == "Pending" and delay is not None and time.time() - flow["submittedAt"] >= delay:
            flow["ack"], flow["updatedAt"] = {"status": "Ok"}, max(time.time(), flow["updatedAt"] + 0.001)
            self._changed(flow)
        return flow

    def public(self, flow: dict) -> dict:
        return self._public(flow)

    def snapshot(self) -> dict:
        return {**super().snapshot(), "callbackUrl": self.callback_url, "deliveries": list(self.deliveries)}

    def reset(self) -> None:
        super().reset()
        self.faults = CallbackFaults()
        self.callback_url, self.callback_secret = self._subscription
        self._queued.clear()
        self.deliveries.clear()

    @staticmethod
    def _public(flow: dict) -> dict:
        """The standard's `Flow`."""
        out = {"submittedAt": _iso(flow["submittedAt"]), "updatedAt": _iso(flow["updatedAt"]),
               "flowId": flow["flowId"], "trackingId": flow["trackingId"], "flowType": flow["flowType"],
               "processingRule": flow["processingRule"], "processingRuleSource": "Input",
               "flowDirection": flow["flowDirection"], "flowSyntax": flow["flowSyntax"],
               "flowProfile": flow["flowProfile"], "acknowledgement": dict(flow["ack"])}
        return {key: value for key, value in out.items() if value is not None}

    # --- the Directory Service ------------------------------------------------------------------

    def directory_line(self, addressing_identifier: str) -> dict:
        if addressing_identifier in self.unregistered or not addressing_identifier.isdigit():
            raise OperatorError(404, "Not found. There is no resource at the given URI.")
        return {"addressingIdentifier": addressing_identifier, "siren": addressing_identifier[:9]}


def default_reason(status: int) -> str:
    """The reason code a status is given when none is named: one the reform admits for it."""
    admitted = [code for code in DEFAULT_REASONS if reason_codes.admitted(code, status)]
    return admitted[0] if admitted else sorted(reason_codes.ALLOWED[status])[0]


def _error(reason_code: str, message: str) -> dict:
    return {"status": "Error", "details": [{"level": "Error", "item": "file", "reasonCode": reason_code,
                                            "reasonMessage": message}]}


def _matches(flow: dict, where: dict, bounds: dict) -> bool:
    updated = _ms(flow["updatedAt"])
    if "updatedAfter" in bounds and not updated > _ms(bounds["updatedAfter"]):
        return False
    if "updatedBefore" in bounds and not updated < _ms(bounds["updatedBefore"]):
        return False
    if "trackingId" in where and flow["trackingId"] != where["trackingId"]:
        return False
    if "ackStatus" in where and flow["ack"]["status"] != where["ackStatus"]:
        return False
    return all(flow[key] in where[key] for key in ("processingRule", "flowType", "flowDirection") if key in where)
