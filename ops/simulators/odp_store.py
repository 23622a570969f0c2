"""State of the e-invoicing operator simulator: tokens, flows, fault switches, call counters.

Everything lives in memory behind one lock. A flow is `Pending` when accepted; it becomes `Ok`
by itself once `auto_ok_after_seconds` have passed since its submission (None: never by itself),
or `Ok`, `Error` or `Archived` through a control action. Flows with the same `trackingId` are
accepted as the real operator would (it does not deduplicate): the platform must not post twice,
and `flows_for(tracking_id)` lets a test count them.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import secrets
import threading
import time
from dataclasses import asdict, dataclass, fields

FLOW_MODES = ("Sandbox", "Production")
CONTROL_STATUSES = {"ok": "Ok", "error": "Error", "archive": "Archived"}


class OperatorError(Exception):
    """An API answer other than success: HTTP status and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


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

    def update(self, values: dict) -> None:
        for name, value in values.items():
            if name == "auto_ok_after_seconds" and (value is None or type(value) in (int, float)) \
                    and (value is None or value >= 0):
                self.auto_ok_after_seconds = value
            elif name == "token_ttl_seconds" and type(value) is int and value > 0:
                self.token_ttl_seconds = value
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
        # Requests received per route, answered or not (faults included).
        self.calls = {"token": 0, "submit": 0, "search": 0}
        self._numbers = itertools.count(1)

    # --- OAuth ----------------------------------------------------------------------------------

    def issue_token(self, client_id: str, client_secret: str, grant_type: str) -> dict:
        with self.lock:
            if grant_type != "client_credentials":
                raise OperatorError(400, "unsupported_grant_type")
            valid = hmac.compare_digest(client_id.encode(), self.client_id.encode()) and hmac.compare_digest(
                client_secret.encode(), self.client_secret.encode())
            if self.faults.reject_token_requests or not valid:
                raise OperatorError(401, "invalid_client")
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
        if flow_info["flowSyntax"] != "Factur-X":
            raise OperatorError(400, "flowSyntax must be Factur-X")
        if self.entity_id is not None and flow_info["entityId"] != self.entity_id:
            raise OperatorError(403, "entityId is not an entity of this client")
        if content_type != "application/pdf" or not content.startswith(b"%PDF-"):
            raise OperatorError(400, "file must be a PDF (application/pdf)")
        if hashlib.sha256(content).hexdigest() != str(flow_info["sha256"]).lower():
            raise OperatorError(400, "sha256 does not match the file")
        now = time.time()
        flow = {
            "flowId": f"flow-{next(self._numbers):06d}-{secrets.token_hex(4)}",
            "trackingId": flow_info["trackingId"],
            "name": flow_info["name"],
            "entityId": flow_info["entityId"],
            "flowSyntax": "Factur-X",
            "flowMode": flow_mode,
            "sha256": flow_info["sha256"],
            "fileName": filename,
            "size": len(content),
            "flowStatus": "Pending",
            "submittedAt": now,
            "updatedAt": now,
        }
        self.flows[flow["flowId"]] = flow
        return self._public(flow)

    def search(self, *, flow_mode: str, where: dict, limit: int, offset: int) -> dict:
        matching = [
            flow for flow in self.flows.values()
            if flow["flowMode"] == flow_mode
            and all(flow.get(key) == value for key, value in where.items() if key in ("flowId", "trackingId"))
        ]
        matching.sort(key=lambda flow: flow["submittedAt"])
        page = matching[offset:offset + limit]
        return {"results": [self._public(self._progress(flow)) for flow in page], "total": len(matching),
                "limit": limit, "offset": offset}

    def act(self, flow_id: str, action: str, message: str | None = None) -> dict:
        flow = self.flows.get(flow_id)
        if flow is None:
            raise OperatorError(404, "unknown flow")
        flow["flowStatus"] = CONTROL_STATUSES[action]
        flow["updatedAt"] = time.time()
        if action == "error":
            flow["errors"] = [{"code": "VALIDATION_FAILED", "message": message or "rejected by the recipient platform"}]
        return self._public(flow)

    def flows_for(self, tracking_id: str | None) -> list[dict]:
        return [self._public(self._progress(flow)) for flow in self.flows.values()
                if tracking_id is None or flow["trackingId"] == tracking_id]

    def _progress(self, flow: dict) -> dict:
        delay = self.settings.auto_ok_after_seconds
        if flow["flowStatus"] == "Pending" and delay is not None and time.time() - flow["submittedAt"] >= delay:
            flow["flowStatus"], flow["updatedAt"] = "Ok", time.time()
        return flow

    @staticmethod
    def _public(flow: dict) -> dict:
        out = dict(flow)
        for key in ("submittedAt", "updatedAt"):
            out[key] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(flow[key]))
        return out

    def snapshot(self) -> dict:
        return {"faults": asdict(self.faults), "settings": asdict(self.settings), "calls": dict(self.calls)}

    def reset(self) -> None:
        self.flows.clear()
        self.tokens.clear()
        self.faults = Faults()
        self.calls = dict.fromkeys(self.calls, 0)
