"""HTTP client of the e-invoicing operator (Specification C, "Outbound calls to the operator").

Built once at boot (`build_operator_client(config)`) and passed to the services that call the
operator. Authentication is OAuth 2.0 client credentials against `ODP_TOKEN_URL`; the token is kept
in memory for the process (`TokenCache`, thread-safe) and refreshed `TOKEN_REFRESH_MARGIN_SECONDS`
before it expires, so many dispatches share one token call. Every request carries `X-FlowMode`.

Retries (tenacity): 429 and 503 get 2 extra attempts, waiting 500 ms x the attempt number. A
`POST /flows` whose outcome is unknown (a timeout, a lost connection, a 5xx) may have been accepted
by the operator: before posting again, the client searches the flow by `trackingId` (the invoice
number) and returns it when found, so an invoice is never submitted twice.

401 and 403 raise `OperatorCredentialsInvalid` (code `EINVOICE_PROVIDER_FAILED`); a 401 also drops
the cached token, so the next call asks for a new one. Missing identity variables (`ODP_CLIENT_ID`,
`ODP_CLIENT_SECRET`, `ODP_ENTITY_ID`) were a warning at boot; here every call is refused with
`OperatorNotConfigured`. The client secret and the access token travel only in the token request's
body and the `Authorization` header; no log line carries them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import requests
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt

from backend.config import Config
from backend.logs import get_logger

log = get_logger("einvoicing.operator")

FLOWS_PATH = "/public/einvoicing/v1/flows"
SEARCH_PATH = "/public/einvoicing/v1/flows/search"
DEFAULT_SCOPE = "einvoicing:public-api"
FLOW_SYNTAX = "Factur-X"
TOKEN_REFRESH_MARGIN_SECONDS = 60.0
EXTRA_ATTEMPTS = 2  # on 429 and 503 (spec C, "Limits")
BACKOFF_SECONDS = 0.5  # x the attempt number
RETRIED_STATUSES = frozenset({429, 503})


class OperatorError(Exception):
    """An operator call that failed for good; the message is safe to log and to show an admin."""

    code = "EINVOICE_PROVIDER_FAILED"

    def __init__(self, message: str, *, status: int | None = None, answer: object = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.answer = answer


class OperatorNotConfigured(OperatorError):
    """An identity variable is missing: no call is made."""


class OperatorCredentialsInvalid(OperatorError):
    """401 or 403: the client credentials are wrong, or the client lacks a permission."""


class OperatorRejected(OperatorError):
    """A 4xx answer other than 401/403/429: the operator refused what we sent."""


class OperatorUnavailable(OperatorError):
    """The operator did not answer usefully (429/503 after the retries, another 5xx, a timeout)."""


class _Transient(Exception):
    def __init__(self, reason: str, *, status: int | None = None, ambiguous: bool) -> None:
        super().__init__(reason)
        self.status = status
        # True when the operator may have processed the request (a timeout, a lost answer, a
        # 5xx): a POST /flows is then searched for before being sent again.
        self.ambiguous = ambiguous


@dataclass(frozen=True)
class Flow:
    """A flow as the operator describes it."""

    flow_id: str
    tracking_id: str | None
    status: str | None  # Pending, Ok, Error, Archived (anything else is unknown)
    error_message: str | None = None
    answer: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_answer(cls, body: dict) -> Flow:
        flow_id = body.get("flowId")
        if not isinstance(flow_id, str) or not flow_id:
            raise OperatorError("the operator answered a flow without flowId", answer=body)
        message = body.get("errorMessage")
        if not message and isinstance(body.get("errors"), list) and body["errors"]:
            message = "; ".join(str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in body["errors"])
        return cls(flow_id=flow_id, tracking_id=body.get("trackingId"), status=body.get("flowStatus"),
                   error_message=message, answer=body)


class TokenCache:
    """The access token of this process, refreshed `margin` seconds before it expires.

    One thread fetches while the others wait on the lock and then reuse its token: a burst of
    dispatches makes one token call.
    """

    def __init__(self, fetch: Callable[[], tuple[str, float]], *, margin: float = TOKEN_REFRESH_MARGIN_SECONDS,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self._fetch = fetch
        self._margin = margin
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._token: str | None = None
        self._refresh_at = 0.0

    def get(self) -> str:
        token = self._token
        if token is not None and self._monotonic() < self._refresh_at:
            return token
        with self._lock:
            if self._token is not None and self._monotonic() < self._refresh_at:
                return self._token
            token, expires_in = self._fetch()
            # A token shorter-lived than twice the margin is used for half its life.
            margin = min(self._margin, expires_in / 2)
            self._token, self._refresh_at = token, self._monotonic() + expires_in - margin
            return token

    def invalidate(self, token: str) -> None:
        """Forget `token` (the operator refused it); a newer token fetched meanwhile stays."""
        with self._lock:
            if self._token == token:
                self._token, self._refresh_at = None, 0.0


def sha256_hex(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


class OdpClient:
    """The operator's public e-invoicing API."""

    def __init__(self, *, base_url: str, token_url: str, client_id: str | None, client_secret: str | None,
                 entity_id: str | None, flow_mode: str = "Sandbox", scope: str = DEFAULT_SCOPE,
                 connect_timeout: float = 5.0, read_timeout: float = 30.0,
                 sleep: Callable[[float], None] = time.sleep, monotonic: Callable[[], float] = time.monotonic,
                 session: requests.Session | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.token_url = token_url
        self.client_id = client_id
        self._client_secret = client_secret
        self.entity_id = entity_id
        self.flow_mode = flow_mode
        self.scope = scope
        self.timeout = (connect_timeout, read_timeout)
        self._sleep = sleep
        self.session = session or requests.Session()
        self.tokens = TokenCache(self._fetch_token, monotonic=monotonic)

    @classmethod
    def from_config(cls, config: Config, **kwargs) -> OdpClient:
        return cls(base_url=config.odp_base_url, token_url=config.odp_token_url, client_id=config.odp_client_id,
                   client_secret=config.odp_client_secret, entity_id=config.odp_entity_id,
                   flow_mode=config.odp_flow_mode, **kwargs)

    def __repr__(self) -> str:  # never the secret nor the token
        return f"OdpClient({self.base_url!r}, flow_mode={self.flow_mode!r})"

    @property
    def missing_identity(self) -> list[str]:
        names = (("ODP_CLIENT_ID", self.client_id), ("ODP_CLIENT_SECRET", self._client_secret),
                 ("ODP_ENTITY_ID", self.entity_id))
        return [name for name, value in names if not value]

    # --- the operator's API -------------------------------------------------------------------

    def submit_flow(self, *, tracking_id: str, name: str, content: bytes) -> Flow:
        """Post the PDF as a Factur-X flow; returns the flow (the existing one when a search after
        an unknown outcome finds it)."""
        self._check_identity()
        flow_info = json.dumps({"entityId": self.entity_id, "flowSyntax": FLOW_SYNTAX, "trackingId": tracking_id,
                                "name": name, "sha256": sha256_hex(content)}, separators=(",", ":"))
        outcome_unknown = False  # a previous attempt may have been accepted by the operator

        def attempt() -> Flow:
            nonlocal outcome_unknown
            if outcome_unknown:
                existing = self.find_by_tracking_id(tracking_id)
                if existing is not None:
                    log.info("flow found after an unknown outcome: not posted again",
                             extra={"fields": {"trackingId": tracking_id, "flowId": existing.flow_id}})
                    return existing
            try:
                # `flowInfo` goes in `data`: a plain form field (no filename), never a file part.
                response = self._send("POST", FLOWS_PATH, data={"flowInfo": flow_info},
                                      files={"file": (name, content, "application/pdf")})
            except _Transient as exc:
                outcome_unknown = outcome_unknown or exc.ambiguous
                raise
            return Flow.from_answer(_json(response))

        return self._retrying(attempt, what=f"POST {FLOWS_PATH}")

    def find_by_tracking_id(self, tracking_id: str) -> Flow | None:
        """The flow of this tracking id (the newest when there are several), or None."""
        flows = self._search({"trackingId": tracking_id})
        return flows[-1] if flows else None

    def get_flow(self, flow_id: str) -> Flow | None:
        flows = self._search({"flowId": flow_id})
        return next((flow for flow in flows if flow.flow_id == flow_id), None)

    # --- transport ----------------------------------------------------------------------------

    def _search(self, where: dict) -> list[Flow]:
        self._check_identity()
        body = {"where": {"flowMode": self.flow_mode, **where}, "limit": 10, "offset": 0}

        def attempt() -> list[Flow]:
            answer = _json(self._send("POST", SEARCH_PATH, json=body))
            results = answer.get("results")
            if not isinstance(results, list):
                raise OperatorError("the operator answered a search without results", answer=answer)
            return [Flow.from_answer(item) for item in results if isinstance(item, dict)]

        return self._retrying(attempt, what=f"POST {SEARCH_PATH}")

    def _retrying(self, attempt: Callable[[], object], *, what: str):
        retrying = Retrying(stop=stop_after_attempt(1 + EXTRA_ATTEMPTS), wait=_backoff, sleep=self._sleep,
                            retry=retry_if_exception_type(_Transient), reraise=True)
        try:
            return retrying(attempt)
        except _Transient as exc:
            raise OperatorUnavailable(
                f"the e-invoicing operator is unavailable ({exc}) after {1 + EXTRA_ATTEMPTS} attempts on {what}",
                status=exc.status) from None

    def _check_identity(self) -> None:
        if missing := self.missing_identity:
            raise OperatorNotConfigured("the e-invoicing operator identity is incomplete: "
                                        + ", ".join(missing) + " not set")

    def _fetch_token(self) -> tuple[str, float]:
        started = time.monotonic()
        try:
            response = self.session.post(  # never redirected: a redirect would carry the secret elsewhere
                self.token_url, timeout=self.timeout, allow_redirects=False,
                data={"grant_type": "client_credentials", "client_id": self.client_id,
                      "client_secret": self._client_secret, "scope": self.scope})
        except requests.RequestException as exc:
            log.warning("operator token endpoint unreachable", extra={"fields": {"error": type(exc).__name__}})
            raise _Transient(type(exc).__name__, ambiguous=False) from None
        status = response.status_code
        log.log(logging.INFO if status < 400 else logging.WARNING, "operator token call",
                extra={"fields": {"status": status, "durationMs": round((time.monotonic() - started) * 1000)}})
        if status in (400, 401, 403):
            raise OperatorCredentialsInvalid(
                f"the e-invoicing operator refused the client credentials (HTTP {status})", status=status)
        if status in RETRIED_STATUSES or status >= 500:
            raise _Transient(f"token endpoint HTTP {status}", status=status, ambiguous=False)
        if status >= 300:
            raise OperatorRejected(f"the operator token endpoint answered HTTP {status} (redirects are not followed)"
                                   if status < 400 else f"the operator token endpoint answered HTTP {status}",
                                   status=status)
        body = _json(response)
        token, expires_in = body.get("access_token"), body.get("expires_in")
        if not isinstance(token, str) or not token or not isinstance(expires_in, int | float) or expires_in <= 0:
            raise OperatorError("the operator token endpoint answered without access_token or expires_in")
        return token, float(expires_in)

    def _send(self, method: str, path: str, **kwargs) -> requests.Response:
        token = self.tokens.get()
        started = time.monotonic()
        fields = {"method": method, "path": path}
        headers = {"Authorization": f"Bearer {token}", "X-FlowMode": self.flow_mode}
        try:
            response = self.session.request(method, self.base_url + path, timeout=self.timeout, headers=headers,
                                            **kwargs)
        except requests.RequestException as exc:  # timeout, lost connection, truncated answer
            log.warning("operator call without answer", extra={"fields": {**fields, "error": type(exc).__name__}})
            raise _Transient(type(exc).__name__, ambiguous=True) from None
        status = response.status_code
        fields.update(status=status, durationMs=round((time.monotonic() - started) * 1000))
        log.log(logging.INFO if status < 400 else logging.WARNING, "operator call", extra={"fields": fields})
        if status == 429:
            raise _Transient("HTTP 429", status=status, ambiguous=False)
        if status >= 500:
            raise _Transient(f"HTTP {status}", status=status, ambiguous=True)
        if status in (401, 403):
            if status == 401:
                self.tokens.invalidate(token)
            raise OperatorCredentialsInvalid(
                f"the e-invoicing operator refused the credentials or a permission is missing (HTTP {status})",
                status=status, answer=_safe_json(response))
        if status >= 400:
            raise OperatorRejected(f"the operator refused {method} {path} (HTTP {status}): {response.text[:300]}",
                                   status=status, answer=_safe_json(response))
        return response


def _backoff(state: RetryCallState) -> float:
    return BACKOFF_SECONDS * state.attempt_number


def _json(response: requests.Response) -> dict:
    body = _safe_json(response)
    if not isinstance(body, dict):
        raise OperatorError(f"the operator answered HTTP {response.status_code} without a JSON object")
    return body


def _safe_json(response: requests.Response) -> object:
    try:
        return response.json()
    except ValueError:
        return None


class StubOperatorClient:
    """`E2E_TEST_MODE=1`: no network. Every flow is accepted at once (`Pending`) and answers `Ok`
    when it is looked up, so a transmission reaches `acknowledged` at the next resync."""

    flow_mode = "Sandbox"
    missing_identity: list[str] = []

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._flows: dict[str, Flow] = {}

    def __repr__(self) -> str:
        return "StubOperatorClient()"

    def submit_flow(self, *, tracking_id: str, name: str, content: bytes) -> Flow:
        with self._lock:
            flow = Flow(flow_id=f"stub-{sha256_hex(tracking_id.encode())[:24]}", tracking_id=tracking_id,
                        status="Pending", answer={"stub": True, "trackingId": tracking_id, "name": name})
            self._flows[flow.flow_id] = flow
            return flow

    def find_by_tracking_id(self, tracking_id: str) -> Flow | None:
        with self._lock:
            found = [flow for flow in self._flows.values() if flow.tracking_id == tracking_id]
        return self._ok(found[-1]) if found else None

    def get_flow(self, flow_id: str) -> Flow | None:
        """Any stub flow is `Ok`, whichever process's stub accepted it (web and worker each have one)."""
        if not flow_id.startswith("stub-"):
            return None
        with self._lock:
            flow = self._flows.get(flow_id) or Flow(flow_id=flow_id, tracking_id=None, status="Pending",
                                                    answer={"stub": True})
        return self._ok(flow)

    @staticmethod
    def _ok(flow: Flow) -> Flow:
        return Flow(flow_id=flow.flow_id, tracking_id=flow.tracking_id, status="Ok",
                    answer={**flow.answer, "flowStatus": "Ok"})


OperatorClient = OdpClient | StubOperatorClient


def build_operator_client(config: Config) -> OperatorClient:
    """The operator client of this process (built once at boot): the stub under `E2E_TEST_MODE`."""
    if config.e2e_test_mode:
        return StubOperatorClient()
    return OdpClient.from_config(config)
