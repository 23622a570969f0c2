"""The e-invoicing platform's interface (`OperatorClient`) and the HTTP client of Specification C's
operator ("Outbound calls to the operator"), the default one; `afnor_client` is the other, an
approved platform's XP Z12-013 API, built on the same transport (`OAuthOperatorClient`).

Built once at boot (`operator_choice.build_operator_client(config)`) and passed to the services
that call the operator. Authentication is OAuth 2.0 client credentials against `ODP_TOKEN_URL`; the token is kept
in memory for the process (`TokenCache`, thread-safe) and refreshed `TOKEN_REFRESH_MARGIN_SECONDS`
before it expires, so many dispatches share one token call. Every request carries `X-FlowMode`.

Retries (tenacity): 429 and 503 get 2 extra attempts, waiting 500 ms x the attempt number, or the
operator's `Retry-After` when it is longer (up to `MAX_INLINE_RETRY_AFTER`; a longer one gives up
at once with `OperatorUnavailable.retry_after`, so the caller schedules the call later instead of
holding a worker). A `POST /flows` whose outcome is unknown may have been accepted by the operator:
before posting again the client searches the flow by `trackingId` (the invoice number) and adopts
only a flow whose `trackingId` matches. After an answered 5xx the operator is done with the request:
one search decides. After a timeout or a lost connection it may still be registering it: the client
searches until `registration_wait` seconds have passed (waits of `REGISTRATION_WAITS`), and only
then posts again. A 409 "duplicate trackingId" answer means the operator already holds the flow: it
is adopted, never reported as a failure. No redirect is ever followed (the token request carries
the secret; an API call the token).

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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Protocol, runtime_checkable

import requests
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt

from backend.config import Config
from backend.logs import get_logger

log = get_logger("einvoicing.operator")

FLOWS_PATH = "/public/einvoicing/v1/flows"
SEARCH_PATH = "/public/einvoicing/v1/flows/search"
DIRECTORY_PATH = "/public/directory/v1/directory-line/search"
DEFAULT_SCOPE = "einvoicing:public-api"
FLOW_SYNTAX = "Factur-X"
TOKEN_REFRESH_MARGIN_SECONDS = 60.0
EXTRA_ATTEMPTS = 2  # on 429 and 503 (spec C, "Limits")
BACKOFF_SECONDS = 0.5  # x the attempt number
RETRIED_STATUSES = frozenset({429, 503})
MAX_INLINE_RETRY_AFTER = 5.0  # seconds a worker may wait for a 429's Retry-After
SEARCH_PAGE_SIZE = 100  # the largest page the operator answers
# Waits between the searches that follow a POST without answer (seconds, in order); the searches
# stop once their sum reaches `registration_wait`.
REGISTRATION_WAITS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
DEFAULT_REGISTRATION_WAIT = 30.0


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
    """The operator did not answer usefully (429/503 after the retries, another 5xx, a timeout).
    `retry_after`: the seconds the operator asked to wait (429 `Retry-After`), when it did."""

    def __init__(self, message: str, *, status: int | None = None, answer: object = None,
                 retry_after: float | None = None) -> None:
        super().__init__(message, status=status, answer=answer)
        self.retry_after = retry_after


class _Transient(Exception):
    def __init__(self, reason: str, *, status: int | None = None, ambiguous: bool, answered: bool = True,
                 retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.status = status
        # True when the operator may have processed the request (a timeout, a lost answer, a
        # 5xx): a POST /flows is then searched for before being sent again.
        self.ambiguous = ambiguous
        # False when no answer came at all: the operator may still be processing the request.
        self.answered = answered
        self.retry_after = retry_after


@dataclass(frozen=True)
class LifecycleStatus:
    """A lifecycle status the operator reports for a flow (the reform's code, its date, a reason)."""

    code: int
    at: str  # ISO 8601, as answered
    reason: str | None = None


@dataclass(frozen=True)
class Flow:
    """A flow as the operator describes it."""

    flow_id: str
    tracking_id: str | None
    status: str | None  # Pending, Ok, Error, Archived (anything else is unknown)
    error_message: str | None = None
    answer: dict = field(default_factory=dict, compare=False, repr=False)
    lifecycle: tuple[LifecycleStatus, ...] = field(default=(), compare=False)

    @classmethod
    def from_answer(cls, body: dict) -> Flow:
        flow_id = body.get("flowId")
        if not isinstance(flow_id, str) or not flow_id:
            raise OperatorError("the operator answered a flow without flowId", answer=body)
        message = body.get("errorMessage")
        if not message and isinstance(body.get("errors"), list) and body["errors"]:
            message = "; ".join(str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in body["errors"])
        status = body.get("ackStatus") or body.get("flowStatus")
        return cls(flow_id=flow_id, tracking_id=body.get("trackingId"), status=status,
                   error_message=message, answer=body, lifecycle=_lifecycle_of(body.get("lifecycle")))


def _lifecycle_of(items: object) -> tuple[LifecycleStatus, ...]:
    """The flow's lifecycle statuses; an item without an integer code or a date is left out."""
    if not isinstance(items, list):
        return ()
    statuses = []
    for item in items:
        if not isinstance(item, dict):
            continue
        code, at, reason = item.get("code"), item.get("at"), item.get("reason")
        if isinstance(code, str) and code.isdigit():
            code = int(code)
        if type(code) is int and isinstance(at, str) and at:
            statuses.append(LifecycleStatus(code=code, at=at, reason=reason if isinstance(reason, str) else None))
    return tuple(statuses)


@dataclass(frozen=True)
class FlowPage:
    """One page of a search: its flows and the operator's total for the whole search."""

    flows: list[Flow]
    total: int


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


class OAuthOperatorClient:
    """What both platform APIs share: OAuth 2.0 client credentials (`TokenCache`), one call with
    its log line and its error mapping (`_send`), the retries on 429/503 (`_retrying`) and the
    never-twice rule of a post whose outcome is unknown (`_post_once`). A subclass names its
    identity variables (`missing_identity`) and the headers every call carries (`_headers`)."""

    def __init__(self, *, base_url: str, token_url: str, client_id: str | None, client_secret: str | None,
                 scope: str, connect_timeout: float = 5.0, read_timeout: float = 30.0,
                 registration_wait: float = DEFAULT_REGISTRATION_WAIT,
                 sleep: Callable[[float], None] = time.sleep, monotonic: Callable[[], float] = time.monotonic,
                 session: requests.Session | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.token_url = token_url
        self.client_id = client_id
        self._client_secret = client_secret
        self.scope = scope
        self.timeout = (connect_timeout, read_timeout)
        self.registration_wait = registration_wait
        self._sleep = sleep
        self.session = session or requests.Session()
        self.tokens = TokenCache(self._fetch_token, monotonic=monotonic)

    def _headers(self) -> dict[str, str]:
        return {}

    # --- transport (shared) ---------------------------------------------------------------

    def _post_once(self, tracking_id: str, post: Callable[[], Flow], *, what: str) -> Flow:
        """`post()` with the retries; before posting again after an unknown outcome (a timeout, a
        lost answer, a 5xx), the flow is searched by its tracking id and adopted when found."""
        pending: _Transient | None = None  # the last attempt's unknown outcome

        def attempt() -> Flow:
            nonlocal pending
            if pending is not None:
                existing = self._find_after_unknown_outcome(tracking_id, settle=not pending.answered)
                if existing is not None:
                    log.info("flow found after an unknown outcome: not posted again",
                             extra={"fields": {"trackingId": tracking_id, "flowId": existing.flow_id}})
                    return existing
            try:
                return post()
            except _Transient as exc:
                if exc.ambiguous:
                    pending = exc
                raise

        return self._retrying(attempt, what=what)

    def _find_after_unknown_outcome(self, tracking_id: str, *, settle: bool) -> Flow | None:
        """After an answered 5xx, one search; after no answer, searches until the operator has had
        `registration_wait` seconds to register the post."""
        found = self.find_by_tracking_id(tracking_id)
        if found is not None or not settle:
            return found
        for wait in _registration_waits(self.registration_wait):
            self._sleep(wait)
            if (found := self.find_by_tracking_id(tracking_id)) is not None:
                return found
        return None

    def _retrying(self, attempt: Callable[[], object], *, what: str):
        retrying = Retrying(stop=stop_after_attempt(1 + EXTRA_ATTEMPTS) | _stop_on_long_retry_after,
                            wait=_backoff, sleep=self._sleep, retry=retry_if_exception_type(_Transient),
                            reraise=True)
        try:
            return retrying(attempt)
        except _Transient as exc:
            raise OperatorUnavailable(
                f"the e-invoicing operator is unavailable ({exc}) on {what}", status=exc.status,
                retry_after=exc.retry_after) from None

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
                      "client_secret": self._client_secret, **({"scope": self.scope} if self.scope else {})})
        except requests.RequestException as exc:
            log.warning("operator token endpoint unreachable", extra={"fields": {"error": type(exc).__name__}})
            raise _Transient(type(exc).__name__, ambiguous=False) from None
        status = response.status_code
        log.log(logging.INFO if status < 400 else logging.WARNING, "operator token call",
                extra={"fields": {"status": status, "durationMs": round((time.monotonic() - started) * 1000)}})
        if status in (400, 401, 403):
            raise OperatorCredentialsInvalid(
                f"the e-invoicing operator refused the client credentials or scope (HTTP {status})", status=status)
        if status in RETRIED_STATUSES or status >= 500:
            raise _Transient(f"token endpoint HTTP {status}", status=status, ambiguous=False,
                             retry_after=_retry_after(response))
        if status >= 300:
            raise OperatorRejected(f"the operator token endpoint answered HTTP {status} (redirects are not followed)"
                                   if status < 400 else f"the operator token endpoint answered HTTP {status}",
                                   status=status)
        body = json_object(response)
        token, expires_in = body.get("access_token"), body.get("expires_in")
        if not isinstance(token, str) or not token or not isinstance(expires_in, int | float) or expires_in <= 0:
            raise OperatorError("the operator token endpoint answered without access_token or expires_in")
        return token, float(expires_in)

    def _send(self, method: str, path: str, *, base_url: str | None = None, **kwargs) -> requests.Response:
        token = self.tokens.get()
        started = time.monotonic()
        fields = {"method": method, "path": path}
        headers = {"Authorization": f"Bearer {token}", **self._headers(), **kwargs.pop("headers", {})}
        try:
            response = self.session.request(method, (base_url or self.base_url) + path, timeout=self.timeout,
                                            headers=headers, allow_redirects=False, **kwargs)
        except requests.RequestException as exc:  # timeout, lost connection, truncated answer
            log.warning("operator call without answer", extra={"fields": {**fields, "error": type(exc).__name__}})
            raise _Transient(type(exc).__name__, ambiguous=True, answered=False) from None
        status = response.status_code
        fields.update(status=status, durationMs=round((time.monotonic() - started) * 1000))
        log.log(logging.INFO if status < 400 else logging.WARNING, "operator call", extra={"fields": fields})
        if status == 429:
            raise _Transient("HTTP 429", status=status, ambiguous=False, retry_after=_retry_after(response))
        if status >= 500:
            raise _Transient(f"HTTP {status}", status=status, ambiguous=True, retry_after=_retry_after(response))
        if 300 <= status < 400:
            raise OperatorError(f"the operator answered {method} {path} with a redirect (HTTP {status}): not followed",
                                status=status)
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


class OdpClient(OAuthOperatorClient):
    """The operator's public e-invoicing API (Specification C)."""

    def __init__(self, *, base_url: str, token_url: str, client_id: str | None, client_secret: str | None,
                 entity_id: str | None, flow_mode: str = "Sandbox", scope: str = DEFAULT_SCOPE, **kwargs) -> None:
        super().__init__(base_url=base_url, token_url=token_url, client_id=client_id, client_secret=client_secret,
                         scope=scope, **kwargs)
        self.entity_id = entity_id
        self.flow_mode = flow_mode

    @classmethod
    def from_config(cls, config: Config, **kwargs) -> OdpClient:
        return cls(base_url=config.odp_base_url, token_url=config.odp_token_url, client_id=config.odp_client_id,
                   client_secret=config.odp_client_secret, entity_id=config.odp_entity_id,
                   flow_mode=config.odp_flow_mode, scope=config.odp_scope, **kwargs)

    def __repr__(self) -> str:  # never the secret nor the token
        return f"OdpClient({self.base_url!r}, flow_mode={self.flow_mode!r})"

    @property
    def missing_identity(self) -> list[str]:
        names = (("ODP_CLIENT_ID", self.client_id), ("ODP_CLIENT_SECRET", self._client_secret),
                 ("ODP_ENTITY_ID", self.entity_id))
        return [name for name, value in names if not value]

    def _headers(self) -> dict[str, str]:
        return {"X-FlowMode": self.flow_mode}

    # --- the operator's API -------------------------------------------------------------------

    def submit_flow(self, *, tracking_id: str, name: str, content: bytes, processing_rule: str = "B2B",
                    flow_syntax: str = FLOW_SYNTAX, content_type: str = "application/pdf",
                    flow_type: str | None = None) -> Flow:
        """Post a flow (the invoice's Factur-X PDF by default); returns the flow (the existing one
        when the operator already holds this tracking id)."""
        self._check_identity()
        info = {"entityId": self.entity_id, "flowSyntax": flow_syntax, "processingRule": processing_rule,
                "trackingId": tracking_id, "name": name, "sha256": sha256_hex(content)}
        if flow_type is not None:
            info["flowType"] = flow_type
        flow_info = json.dumps(info, separators=(",", ":"))

        def post() -> Flow:
            try:
                # `flowInfo` goes in `data`: a plain form field (no filename), never a file part.
                response = self._send("POST", FLOWS_PATH, data={"flowInfo": flow_info},
                                      files={"file": (name, content, content_type)})
            except OperatorRejected as exc:
                if exc.status == 409:  # the operator already holds a flow with this tracking id
                    existing = self.find_by_tracking_id(tracking_id)
                    if existing is not None:
                        log.info("duplicate answered: the operator's flow is adopted",
                                 extra={"fields": {"trackingId": tracking_id, "flowId": existing.flow_id}})
                        return existing
                raise
            return Flow.from_answer(json_object(response))

        return self._post_once(tracking_id, post, what=f"POST {FLOWS_PATH}")

    def find_by_tracking_id(self, tracking_id: str) -> Flow | None:
        """The flow of this tracking id (the newest when there are several), or None. A result
        with another tracking id (an operator ignoring the filter) is never adopted."""
        flows = [flow for flow in self._search({"trackingId": tracking_id}).flows if flow.tracking_id == tracking_id]
        return flows[-1] if flows else None

    def get_flow(self, flow_id: str) -> Flow | None:
        flows = self._search({"flowId": flow_id}).flows
        return next((flow for flow in flows if flow.flow_id == flow_id), None)

    def changed_flows(self, *, updated_after: str, offset: int = 0, limit: int = SEARCH_PAGE_SIZE) -> FlowPage:
        """One page of the flows changed after `updated_after` (ISO 8601), in the operator's order."""
        return self._search({"updatedAfter": updated_after}, limit=limit, offset=offset)

    def changed_pages(self, *, updated_after: str) -> Iterator[list[Flow]]:
        """The flows changed after `updated_after`, one page per search (offsets, in submission
        order: a page never shifts while flows change); a page is asked for once the previous one
        is used."""
        offset = 0
        while True:
            page = self.changed_flows(updated_after=updated_after, offset=offset)
            yield page.flows
            offset += len(page.flows)
            if not page.flows or offset >= page.total:
                return

    def recipient_registered(self, siren: str) -> bool:
        """Whether the directory has a line for this SIREN (the buyer's electronic address)."""
        self._check_identity()
        body = {"filters": {"addressingIdentifier": {"op": "strict", "value": siren}}, "limit": 1}

        def attempt() -> bool:
            answer = json_object(self._send("POST", DIRECTORY_PATH, json=body))
            results = answer.get("results")
            if not isinstance(results, list):
                raise OperatorError("the operator answered a directory search without results", answer=answer)
            return any(isinstance(line, dict) and line.get("addressingIdentifier") == siren for line in results)

        return self._retrying(attempt, what=f"POST {DIRECTORY_PATH}")

    # --- the spec's search ---

    def _search(self, where: dict, *, limit: int = 10, offset: int = 0) -> FlowPage:
        self._check_identity()
        body = {"where": {"flowMode": self.flow_mode, **where}, "limit": limit, "offset": offset}

        def attempt() -> FlowPage:
            answer = json_object(self._send("POST", SEARCH_PATH, json=body))
            results = answer.get("results")
            if not isinstance(results, list):
                raise OperatorError("the operator answered a search without results", answer=answer)
            flows = [Flow.from_answer(item) for item in results if isinstance(item, dict)]
            total = answer.get("total")
            return FlowPage(flows=flows, total=total if type(total) is int else len(flows))

        return self._retrying(attempt, what=f"POST {SEARCH_PATH}")

def _registration_waits(total: float) -> list[float]:
    """The waits of `REGISTRATION_WAITS` (the last one repeated) until their sum reaches `total`."""
    waits: list[float] = []
    index = 0
    while sum(waits) < total:
        wait = REGISTRATION_WAITS[min(index, len(REGISTRATION_WAITS) - 1)]
        waits.append(min(wait, total - sum(waits)))
        index += 1
    return waits


def _retry_after(response: requests.Response) -> float | None:
    """`Retry-After` in seconds (an HTTP date is read as a delay from now); None when absent."""
    value = (response.headers.get("Retry-After") or "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        return max((parsedate_to_datetime(value).timestamp() - time.time()), 0.0)
    except (TypeError, ValueError):
        return None


def _stop_on_long_retry_after(state: RetryCallState) -> bool:
    """A Retry-After longer than a worker may wait ends the retries at once (the caller schedules)."""
    exc = state.outcome.exception() if state.outcome is not None else None
    return isinstance(exc, _Transient) and (exc.retry_after or 0) > MAX_INLINE_RETRY_AFTER


def _backoff(state: RetryCallState) -> float:
    """500 ms x the attempt number, or the operator's Retry-After when it asks for longer."""
    exc = state.outcome.exception() if state.outcome is not None else None
    retry_after = exc.retry_after if isinstance(exc, _Transient) and exc.retry_after else 0.0
    return max(BACKOFF_SECONDS * state.attempt_number, retry_after)


def json_object(response: requests.Response) -> dict:
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
    """`E2E_TEST_MODE=1` (refused when `ENVIRONMENT=production`): no network. Every flow is
    accepted and answered `Ok` at once, so a transmission reaches `acknowledged` at its dispatch;
    every recipient is registered; no flow ever changes afterwards."""

    flow_mode = "Sandbox"
    missing_identity: list[str] = []

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._flows: dict[str, Flow] = {}

    def __repr__(self) -> str:
        return "StubOperatorClient()"

    def submit_flow(self, *, tracking_id: str, name: str, content: bytes, **_flow_info: str) -> Flow:
        with self._lock:
            flow = Flow(flow_id=f"stub-{sha256_hex(tracking_id.encode())[:24]}", tracking_id=tracking_id,
                        status="Ok", answer={"stub": True, "trackingId": tracking_id, "name": name,
                                             "flowStatus": "Ok"})
            self._flows[flow.flow_id] = flow
            return flow

    def find_by_tracking_id(self, tracking_id: str) -> Flow | None:
        with self._lock:
            found = [flow for flow in self._flows.values() if flow.tracking_id == tracking_id]
        return found[-1] if found else None

    def get_flow(self, flow_id: str) -> Flow | None:
        """Any stub flow is `Ok`, whichever process's stub accepted it (web and worker each have one)."""
        if not flow_id.startswith("stub-"):
            return None
        with self._lock:
            return self._flows.get(flow_id) or Flow(flow_id=flow_id, tracking_id=None, status="Ok",
                                                    answer={"stub": True, "flowStatus": "Ok"})

    def changed_pages(self, *, updated_after: str) -> Iterator[list[Flow]]:
        return iter(())

    def recipient_registered(self, siren: str) -> bool:
        return True


@runtime_checkable
class OperatorClient(Protocol):
    """What the e-invoicing area asks of its platform, whichever API the platform speaks: the
    spec's operator (`OdpClient`, the default), an AFNOR XP Z12-013 Flow Service
    (`afnor_client.AfnorClient`, `EINVOICING_OPERATOR=afnor`) or the test-mode stub. Invoices and
    the CDAR status messages the platform issues both go through `submit_flow`."""

    @property
    def missing_identity(self) -> list[str]:
        """The identity variables not set (every call is refused while one is missing)."""
        ...

    def submit_flow(self, *, tracking_id: str, name: str, content: bytes, processing_rule: str = "B2B",
                    flow_syntax: str = FLOW_SYNTAX, content_type: str = "application/pdf",
                    flow_type: str | None = None) -> Flow:
        """Post a flow once (never twice for a tracking id); returns it."""
        ...

    def find_by_tracking_id(self, tracking_id: str) -> Flow | None:
        """The flow of this exact tracking id, or None."""
        ...

    def get_flow(self, flow_id: str) -> Flow | None:
        """The flow of this id, or None when the platform does not know it."""
        ...

    def changed_pages(self, *, updated_after: str) -> Iterator[list[Flow]]:
        """The flows changed after `updated_after` (ISO 8601, the platform's clock), one page per
        search, with the lifecycle statuses reported for them."""
        ...

    def recipient_registered(self, siren: str) -> bool:
        """Whether the directory has a line for this SIREN (the addressee's electronic address)."""
        ...
