"""State of the e-invoicing operator simulator: tokens, flows, fault switches, call counters.

Everything lives in memory behind one lock. A flow is `Pending` when accepted; it becomes `Ok`
by itself once `auto_ok_after_seconds` have passed since its submission (None: never by itself),
or `Ok`, `Error` or `Archived` through a control action. After that, lifecycle statuses (the
reform's codes) are scripted per flow (`add_lifecycle`); each change moves the flow's `updatedAt`,
which the search's `updatedAfter` filter reads. Flows with the same `trackingId` are accepted
(the platform must not post twice, and `flows_for(tracking_id)` lets a test count them) unless
`reject_duplicates` is set: then the second post answers 409 with the first flow's id. The
directory knows every SIREN except those marked unregistered (`set_registered`).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import secrets
import threading
import time
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime

from backend.einvoicing import cdar_validation
from backend.einvoicing.reform_statuses import LABELS as LIFECYCLE_LABELS

FLOW_MODES = ("Sandbox", "Production")
CONTROL_STATUSES = {"ok": "Ok", "error": "Error", "archive": "Archived"}
DEFAULT_SCOPE = "einvoicing:public-api"
INVOICE_SYNTAXES = ("Factur-X", "CII", "UBL")
STATUS_FLOW_TYPE = "CustomerInvoiceLC"  # a status the platform issues, as a CDAR message
STATUS_SYNTAX = "CDAR"
XML_TYPES = ("application/xml", "text/xml")
PROCESSING_RULES = ("B2B", "B2BInt")


class OperatorError(Exception):
    """An API answer other than success: HTTP status, message (and the flow a 409 names)."""

    def __init__(self, status: int, message: str, *, flow_id: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.flow_id = flow_id


@dataclass
class Faults:
    """Fault switches, set through `POST /_control/faults` (unknown names are refused)."""

    unauthorized: bool = False  # 401 on every API call, whatever the token
    forbidden: bool = False  # 403 on every API call (the client lacks a permission)
    reject_token_requests: bool = False  # 401 invalid_client on the token endpoint
    rate_limited_calls: int = 0  # the next N API calls answer 429
    unavailable_calls: int = 0  # the next N API calls answer 503
    unavailable_submits: int = 0  # the next N POST /flows answer 503 (searches still answer)
    unavailable_searches: int = 0  # the next N searches answer 503
    slow_calls: int = 0  # the next N API calls wait `slow_seconds` before being processed
    slow_seconds: float = 0.0
    lost_answers: int = 0  # the next N accepted flows: the connection closes before the answer
    search_ignores_filters: bool = False  # searches answer every flow, whatever `where` says

    def update(self, values: dict) -> None:
        known = {f.name: f.type for f in fields(self)}
        for name, value in values.items():
            if name not in known:
                raise OperatorError(400, f"unknown fault {name!r}")
            expected = {"bool": (bool,), "int": (int,), "float": (int, float)}[known[name]]
            if type(value) not in expected:
                raise OperatorError(400, f"fault {name!r} must be {known[name]}")
            setattr(self, name, value)

    def take_api_fault(self, route: str) -> OperatorError | None:
        """The fault this API call answers with, if any (counters are consumed)."""
        if self.unauthorized:
            return OperatorError(401, "Unauthorized")
        if self.forbidden:
            return OperatorError(403, "Forbidden")
        if self.rate_limited_calls > 0:
            self.rate_limited_calls -= 1
            return OperatorError(429, "Too Many Requests")
        if self.unavailable_calls > 0:
            self.unavailable_calls -= 1
            return OperatorError(503, "Service Unavailable")
        if route == "submit" and self.unavailable_submits > 0:
            self.unavailable_submits -= 1
            return OperatorError(503, "Service Unavailable")
        if route == "search" and self.unavailable_searches > 0:
            self.unavailable_searches -= 1
            return OperatorError(503, "Service Unavailable")
        return None

    def take_delay(self) -> float:
        if self.slow_calls > 0:
            self.slow_calls -= 1
            return self.slow_seconds
        return 0.0

    def take_lost_answer(self) -> bool:
        if self.lost_answers > 0:
            self.lost_answers -= 1
            return True
        return False


@dataclass
class Settings:
    auto_ok_after_seconds: float | None = None
    token_ttl_seconds: int = 3600
    scope: str = DEFAULT_SCOPE  # the OAuth scope a token request must ask for
    reject_duplicates: bool = False  # a second post of a trackingId answers 409
    retry_after_seconds: int = 1  # the Retry-After of a 429

    def update(self, values: dict) -> None:
        for name, value in values.items():
            if name == "auto_ok_after_seconds" and (value is None or type(value) in (int, float)) \
                    and (value is None or value >= 0):
                self.auto_ok_after_seconds = value
            elif name in ("token_ttl_seconds", "retry_after_seconds") and type(value) is int and value > 0:
                setattr(self, name, value)
            elif name == "scope" and isinstance(value, str) and value:
                self.scope = value
            elif name == "reject_duplicates" and type(value) is bool:
                self.reject_duplicates = value
            else:
                raise OperatorError(400, f"invalid setting {name!r}")


class Store:
    def __init__(self, *, client_id: str, client_secret: str, entity_id: str | None,
                 settings: Settings | None = None) -> None:
        self.lock = threading.Lock()
        self.client_id = client_id
        self.client_secret = client_secret
        self.entity_id = entity_id
        self.settings = settings or Settings()
        self.faults = Faults()
        self.tokens: dict[str, float] = {}  # token -> expiry (monotonic)
        self.flows: dict[str, dict] = {}
        self.unregistered: set[str] = set()  # SIRENs the directory does not know
        # Requests received per route, answered or not (faults included).
        self.calls = {"token": 0, "submit": 0, "search": 0, "directory": 0}
        self.in_flight = 0  # API requests being processed (a slow one included)
        self._numbers = itertools.count(1)

    # --- OAuth ----------------------------------------------------------------------------------

    def issue_token(self, client_id: str, client_secret: str, grant_type: str, scope: str = "") -> dict:
        with self.lock:
            if grant_type != "client_credentials":
                raise OperatorError(400, "unsupported_grant_type")
            valid = hmac.compare_digest(client_id.encode(), self.client_id.encode()) and hmac.compare_digest(
                client_secret.encode(), self.client_secret.encode())
            if self.faults.reject_token_requests or not valid:
                raise OperatorError(401, "invalid_client")
            if self.settings.scope not in scope.split():
                raise OperatorError(400, "invalid_scope")
            token = "odp_at_" + secrets.token_urlsafe(24)
            ttl = self.settings.token_ttl_seconds
            self.tokens[token] = time.monotonic() + ttl
            return {"access_token": token, "token_type": "Bearer", "expires_in": ttl}

    def check_token(self, token: str) -> None:
        expires = self.tokens.get(token)
        if expires is None or expires <= time.monotonic():
            raise OperatorError(401, "Unauthorized: unknown or expired token")

    # --- flows ----------------------------------------------------------------------------------

    def submit(self, *, flow_mode: str, flow_info: dict, filename: str, content_type: str, content: bytes) -> dict:
        missing = [k for k in ("entityId", "flowSyntax", "trackingId", "name", "sha256") if not flow_info.get(k)]
        if missing:
            raise OperatorError(400, "flowInfo is missing " + ", ".join(missing))
        status_report = flow_info.get("flowType") == STATUS_FLOW_TYPE
        if status_report and flow_info["flowSyntax"] != STATUS_SYNTAX:
            raise OperatorError(400, f"a {STATUS_FLOW_TYPE} flow has flowSyntax {STATUS_SYNTAX}")
        if not status_report and flow_info["flowSyntax"] not in INVOICE_SYNTAXES:
            raise OperatorError(400, "flowSyntax must be Factur-X, CII or UBL")
        if flow_info.get("processingRule", "B2B") not in PROCESSING_RULES:
            raise OperatorError(400, "processingRule must be B2B or B2BInt")
        if self.entity_id is not None and flow_info["entityId"] != self.entity_id:
            raise OperatorError(403, "entityId is not an entity of this client")
        report = None
        if status_report:
            report = self._status_report(content_type, content)
        elif content_type != "application/pdf" or not content.startswith(b"%PDF-"):
            raise OperatorError(400, "file must be a PDF (application/pdf)")
        if hashlib.sha256(content).hexdigest() != str(flow_info["sha256"]).lower():
            raise OperatorError(400, "sha256 does not match the file")
        if self.settings.reject_duplicates:
            existing = next((flow for flow in self.flows.values() if flow["flowMode"] == flow_mode
                             and flow["trackingId"] == flow_info["trackingId"]), None)
            if existing is not None:
                raise OperatorError(409, "duplicate trackingId", flow_id=existing["flowId"])
        now = time.time()
        flow = {
            "flowId": f"flow-{next(self._numbers):06d}-{secrets.token_hex(4)}",
            "trackingId": flow_info["trackingId"],
            "name": flow_info["name"],
            "entityId": flow_info["entityId"],
            "flowSyntax": flow_info["flowSyntax"],
            "flowType": STATUS_FLOW_TYPE if status_report else "CustomerInvoice",
            "flowDirection": "Out",
            "processingRule": flow_info.get("processingRule", "B2B"),
            "flowMode": flow_mode,
            "sha256": flow_info["sha256"],
            "fileName": filename,
            "size": len(content),
            "flowStatus": "Pending",
            "lifecycle": [],
            "submittedAt": now,
            "updatedAt": now,
        }
        if report is not None:
            flow["statusReport"] = report
        self.flows[flow["flowId"]] = flow
        return self._public(flow)

    @staticmethod
    def _status_report(content_type: str, content: bytes) -> dict:
        """A status the platform issues: a CDAR message the lifecycle profile accepts (the same
        check as the platform's before sending); what it says is kept as the flow's
        `statusReport`."""
        if content_type not in XML_TYPES:
            raise OperatorError(400, "a status is a CDAR message (application/xml)")
        try:
            return cdar_validation.check(content)
        except cdar_validation.CdarInvalid as exc:
            raise OperatorError(400, f"invalid CDAR message: {exc}") from None

    def search(self, *, flow_mode: str, where: dict, limit: int, offset: int) -> dict:
        updated_after = where.get("updatedAfter")
        after = _parse_time(updated_after) if updated_after is not None else None
        if updated_after is not None and after is None:
            raise OperatorError(400, "updatedAfter must be an ISO 8601 date-time")
        flows = [self._progress(flow) for flow in self.flows.values()]
        if self.faults.search_ignores_filters:
            matching = flows
        else:
            matching = [
                flow for flow in flows
                if flow["flowMode"] == flow_mode
                and all(flow.get(key) == value for key, value in where.items() if key in ("flowId", "trackingId"))
                and (after is None or _ms(flow["updatedAt"]) > _ms(after))
            ]
        # Submission order, so a page never shifts while flows change (the operator's own order).
        matching.sort(key=lambda flow: (flow["submittedAt"], flow["flowId"]))
        page = matching[offset:offset + limit]
        return {"results": [self._public(flow) for flow in page], "total": len(matching),
                "limit": limit, "offset": offset}

    def add_lifecycle(self, flow_id: str, code: object, reason: object) -> dict:
        flow = self.flows.get(flow_id)
        if flow is None:
            raise OperatorError(404, "unknown flow")
        if type(code) is not int or code not in LIFECYCLE_LABELS:
            raise OperatorError(400, "code must be one of " + ", ".join(map(str, LIFECYCLE_LABELS)))
        if reason is not None and not isinstance(reason, str):
            raise OperatorError(400, "reason must be a string")
        now = max(time.time(), flow["updatedAt"] + 0.001)
        flow["lifecycle"].append({"code": code, "label": LIFECYCLE_LABELS[code], "at": _iso(now), "reason": reason})
        flow["updatedAt"] = now
        return self._public(flow)

    def set_registered(self, siren: str, registered: bool) -> None:
        (self.unregistered.discard if registered else self.unregistered.add)(siren)

    def directory_search(self, body: dict) -> dict:
        criterion = ((body.get("filters") or {}).get("addressingIdentifier") or {})
        siren = criterion.get("value")
        if not isinstance(siren, str) or not siren:
            raise OperatorError(400, "filters.addressingIdentifier.value is required")
        lines = [] if siren in self.unregistered else [{"addressingIdentifier": siren, "siren": siren,
                                                         "platform": "simulated-platform"}]
        return {"results": lines, "totalNumberOfResults": len(lines)}

    def act(self, flow_id: str, action: str, message: str | None = None, code: str | None = None) -> dict:
        flow = self.flows.get(flow_id)
        if flow is None:
            raise OperatorError(404, "unknown flow")
        flow["flowStatus"] = CONTROL_STATUSES[action]
        flow["updatedAt"] = max(time.time(), flow["updatedAt"] + 0.001)
        if action == "error":
            flow["errors"] = [{"code": code or "VALIDATION_FAILED",
                               "message": message or "rejected by the recipient platform"}]
        return self._public(flow)

    def flows_for(self, tracking_id: str | None, flow_type: str | None = None) -> list[dict]:
        return [self._public(self._progress(flow)) for flow in self.flows.values()
                if (tracking_id is None or flow["trackingId"] == tracking_id)
                and (flow_type is None or flow["flowType"] == flow_type)]

    def _progress(self, flow: dict) -> dict:
        delay = self.settings.auto_ok_after_seconds
        if flow["flowStatus"] == "Pending" and delay is not None and time.time() - flow["submittedAt"] >= delay:
            flow["flowStatus"], flow["updatedAt"] = "Ok", time.time()
        return flow

    @staticmethod
    def _public(flow: dict) -> dict:
        out = dict(flow)
        out["ackStatus"] = flow["flowStatus"]  # XP Z12-013's name; `flowStatus` kept for older clients
        out["lifecycle"] = [dict(item) for item in flow["lifecycle"]]
        for key in ("submittedAt", "updatedAt"):
            out[key] = _iso(flow[key])
        return out

    def snapshot(self) -> dict:
        return {"faults": asdict(self.faults), "settings": asdict(self.settings), "calls": dict(self.calls),
                "inFlight": self.in_flight, "unregisteredSirens": sorted(self.unregistered)}

    def reset(self) -> None:
        self.flows.clear()
        self.tokens.clear()
        self.unregistered.clear()
        self.faults = Faults()
        self.calls = dict.fromkeys(self.calls, 0)


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


def _iso(seconds: float) -> str:
    """UTC, to the millisecond (a search's `updatedAfter` compares at that precision)."""
    ms = _ms(seconds)
    moment = datetime.fromtimestamp(ms // 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _parse_time(value: object) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return moment.timestamp()
