"""Approved platform (PA) simulator speaking AFNOR XP Z12-013: the Flow Service (annex A) and
the Directory Service's directory-line lookup (annex B), in the version described in
`backend/einvoicing/afnor_openapi/` (the contract tests validate its answers against that
description), with the spec operator simulator's OAuth endpoint, fault switches and control
routes (`odp.py`, `odp_store.py`: the same names, the same meaning).

In-process (tests): `AfnorSimulator(client_id=..., client_secret=...).start()`, then
`sim.flow_url`, `sim.directory_url` and `sim.token_url` are the client's `AFNOR_FLOW_URL`,
`AFNOR_DIRECTORY_URL` and `AFNOR_TOKEN_URL`; `stop()` ends it. As a process (`vitrine dev` with
`EINVOICING_OPERATOR=afnor`, port P+2): `python -m ops.simulators.afnor --port P`.

Routes:
- `POST /oauth/token`: client credentials (form fields or HTTP Basic) and `settings.scope`;
- `POST /flow-service/v1/flows` (multipart: `flowInfo` JSON part, `file`): 202 `FullFlowInfo`;
  400 for a `flowInfo` the standard does not allow, 422 for a file the platform refuses at once
  (empty, not a PDF for Factur-X, an invalid CDAR message);
- `POST /flow-service/v1/flows/search` (`{where, limit}`): `{limit, filters, results}`;
- `GET /flow-service/v1/flows/{flowId}?docType=Metadata|Original`: the `Flow`, or the file;
- `GET /flow-service/v1/healthcheck`;
- `GET /directory-service/v1/directory-line/code:{addressingIdentifier}`: the line, or 404;
  the API routes need `Authorization: Bearer <token>`; errors are the standard's `Error`
  (`errorCode`, `errorMessage`); a 429 carries `Retry-After`;
- control: `POST /_control/flows/{flowId}/{ok|error}` (`{message?, code?}`: the detail's reason
  code), `POST /_control/flows/{flowId}/lifecycle` (`{code, reason?, reasonCode?}`: an incoming
  CDAR flow saying that status of the invoice), `POST /_control/directory` (`{siren, registered}`),
  `POST /_control/callbacks` (`{url, secret}`: the callback subscription, `url` null for none),
  `GET /_control/flows[?trackingId=&flowType=]`, `GET|POST /_control/faults`,
  `POST /_control/settings`, `GET /_control/state` (with the callbacks' `deliveries`),
  `POST /_control/reset`.

Callbacks (`afnor_store`): a change of a flow made by a control route is delivered before that
route answers (a test sees it delivered when its call returns); one found on a read (a flow
acknowledged by itself after `auto_ok_after_seconds`) after the read's answer. Each is posted
once, synchronously, its answer recorded; a callback lost is left to the subscriber's polling.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import socket
import time
from email.parser import BytesParser
from email.policy import HTTP
from urllib.parse import parse_qs, unquote, urlsplit

import requests

from ops.simulators.afnor_store import AfnorStore, Delivery
from ops.simulators.odp import MAX_BODY
from ops.simulators.odp_store import OperatorError, Settings
from ops.simulators.operator_control import OperatorControl
from ops.simulators.server import BackgroundSimulator, SimulatorHandler, run_until_stopped

FLOW_SERVICE = "/flow-service"
DIRECTORY_SERVICE = "/directory-service"
DEFAULT_SCOPE = "afnor:platform"
ERROR_CODES = {400: "MISSING_REQUIRED_FIELD", 401: "MISSING_TOKEN", 403: "FORBIDDEN_ACCESS",
               404: "MISSING_RESOURCE", 413: "FILE_SIZE_EXCEEDED", 415: "UNSUPPORTED_MEDIA_TYPE",
               422: "UNPROCESSABLE_ENTITY", 429: "TOO_MANY_REQUESTS", 500: "INTERNAL_ERROR",
               503: "RESOURCE_ERROR"}

ROUTES = [
    (method, re.compile(f"^{pattern}$"), name, api)
    for method, pattern, name, api in [
        ("POST", r"/oauth/token", "token", False),
        ("POST", FLOW_SERVICE + r"/v1/flows", "submit", True),
        ("POST", FLOW_SERVICE + r"/v1/flows/search", "search", True),
        ("GET", FLOW_SERVICE + r"/v1/healthcheck", "health", False),
        ("GET", FLOW_SERVICE + r"/v1/flows/(?P<flow_id>[^/]+)", "get", True),
        ("GET", DIRECTORY_SERVICE + r"/v1/directory-line/code:(?P<identifier>[^/]+)", "directory", True),
        ("POST", r"/_control/flows/(?P<flow_id>[^/]+)/(?P<action>ok|error)", "control_action", False),
        ("POST", r"/_control/flows/(?P<flow_id>[^/]+)/lifecycle", "control_lifecycle", False),
        ("POST", r"/_control/directory", "control_directory", False),
        ("POST", r"/_control/callbacks", "control_callbacks", False),
        ("GET", r"/_control/flows", "control_flows", False),
        ("GET", r"/_control/faults", "control_get_state", False),
        ("POST", r"/_control/faults", "control_set_faults", False),
        ("POST", r"/_control/settings", "control_settings", False),
        ("GET", r"/_control/state", "control_get_state", False),
        ("POST", r"/_control/reset", "control_reset", False),
    ]
]


class _LostAnswer(Exception):
    """The flow was accepted; the answer is never sent (the connection is closed)."""


class Handler(OperatorControl, SimulatorHandler):
    def _dispatch(self, method: str) -> None:
        split = urlsplit(self.path)
        path = split.path.rstrip("/") or "/"
        self._query = parse_qs(split.query)
        store = self.server.store
        for route_method, pattern, name, api in ROUTES:
            match = pattern.match(path)
            if match is None or route_method != method:
                continue
            if api:
                with store.lock:
                    store.in_flight += 1
            try:
                self._body = self._read_body()
                if api or name == "token":
                    with store.lock:
                        store.calls[name] += 1
                if api:
                    self._check_api_call(name)
                getattr(self, name if not api else f"api_{name}")(
                    **{key: unquote(value) for key, value in match.groupdict().items()})
            except _LostAnswer:
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
            except OperatorError as exc:
                if name == "token":
                    self._json(exc.status, {"error": exc.message})
                else:
                    self._json(exc.status, {"errorCode": ERROR_CODES.get(exc.status, "ERROR"),
                                            "errorMessage": exc.message})
            finally:
                if api:
                    with store.lock:
                        store.in_flight -= 1
                self._deliver_callbacks()
            return
        self.close_connection = True
        self._json(404, {"errorCode": "MISSING_RESOURCE", "errorMessage": "not found"})

    # --- plumbing -----------------------------------------------------------------------------

    def _read_body(self) -> bytes:
        body = self._body_within(MAX_BODY)
        if body is None:
            raise OperatorError(413, "Provided file is too big")
        return body

    def _check_api_call(self, route: str) -> None:
        store = self.server.store
        with store.lock:
            fault = store.faults.take_api_fault(route)
            delay = store.faults.take_delay()
        if delay:
            time.sleep(delay)
        if fault is not None:
            raise fault
        scheme, _, token = (self.headers.get("Authorization") or "").partition(" ")
        with store.lock:
            if scheme != "Bearer":
                raise OperatorError(401, "a Bearer token is required")
            store.check_token(token)

    def _json_body(self) -> dict:
        try:
            body = json.loads(self._body or b"{}")
        except ValueError:
            raise OperatorError(400, "invalid JSON") from None
        if not isinstance(body, dict):
            raise OperatorError(400, "a JSON object is expected")
        return body

    def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if status == 429:
            self.send_header("Retry-After", str(self.server.store.settings.retry_after_seconds))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, data: object) -> None:
        self._send(status, json.dumps(data).encode(), "application/json")

    def _deliver_callbacks(self) -> None:
        """Post the callbacks queued, outside the store's lock, recording each answer."""
        store = self.server.store
        with store.lock:
            deliveries = store.take_callbacks()
        for delivery in deliveries:
            status = _post(delivery)
            with store.lock:
                store.delivered(delivery, status)

    def token(self) -> None:
        form = {k: v[0] for k, v in parse_qs(self._body.decode("utf-8", "replace")).items()}
        self._json(200, self.server.store.issue_token(form.get("client_id", ""), form.get("client_secret", ""),
                                                      form.get("grant_type", ""), form.get("scope", "")))

    def health(self) -> None:
        self._send(200, b"", "text/plain")

    # --- the Flow Service -----------------------------------------------------------------------

    def api_submit(self) -> None:
        content_type = self.headers.get("Content-Type") or ""
        if not content_type.startswith("multipart/form-data"):
            raise OperatorError(415, "multipart/form-data is required")
        message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + self._body)
        parts = {part.get_param("name", header="content-disposition"): part for part in message.iter_parts()}
        info_part, file_part = parts.get("flowInfo"), parts.get("file")
        if info_part is None or file_part is None:
            raise OperatorError(400, "flowInfo and file are required")
        if info_part.get_content_type() != "application/json":
            raise OperatorError(400, "flowInfo is a JSON part (Content-Type: application/json)")
        try:
            flow_info = json.loads(info_part.get_payload(decode=True) or b"")
        except ValueError:
            raise OperatorError(400, "flowInfo is not JSON") from None
        if not isinstance(flow_info, dict):
            raise OperatorError(400, "flowInfo is a JSON object")
        store = self.server.store
        with store.lock:
            answer = store.submit(flow_info=flow_info, content_type=file_part.get_content_type(),
                                  content=file_part.get_payload(decode=True) or b"")
            lost = store.faults.take_lost_answer()
        if lost:
            raise _LostAnswer
        self._json(202, answer)

    def api_search(self) -> None:
        body = self._json_body()
        store = self.server.store
        with store.lock:
            self._json(200, store.search_flows(body))

    def api_get(self, flow_id: str) -> None:
        doc_type = (self._query.get("docType") or ["Metadata"])[0]
        store = self.server.store
        with store.lock:
            flow = store.get_flow(flow_id)
            public = store.public(flow)
        if doc_type == "Metadata":
            self._json(200, public)
        elif doc_type == "Original":
            self._send(200, flow["content"], "application/octet-stream",
                       {"Content-Disposition": f"attachment;filename={flow['name'] or flow['flowId']}"})
        else:
            raise OperatorError(404, f"no {doc_type} document for this flow")

    # --- the Directory Service ------------------------------------------------------------------

    def api_directory(self, identifier: str) -> None:
        store = self.server.store
        with store.lock:
            self._json(200, store.directory_line(identifier))

    # --- control ------------------------------------------------------------------------------

    def control_action(self, flow_id: str, action: str) -> None:
        body = self._json_body()
        message, code = body.get("message"), body.get("code")
        store = self.server.store
        with store.lock:
            flow = store.act(flow_id, action, message if isinstance(message, str) else None,
                             code if isinstance(code, str) else None)
        self._deliver_callbacks()
        self._json(200, flow)

    def control_lifecycle(self, flow_id: str) -> None:
        body = self._json_body()
        store = self.server.store
        with store.lock:
            flow = store.add_lifecycle(flow_id, body.get("code"), body.get("reason"), body.get("reasonCode"))
        self._deliver_callbacks()
        self._json(200, flow)

    def control_callbacks(self) -> None:
        body = self._json_body()
        store = self.server.store
        with store.lock:
            store.subscribe(body.get("url"), body.get("secret"))
            self._json(200, store.snapshot())

    def control_directory(self) -> None:
        body = self._json_body()
        siren, registered = body.get("siren"), body.get("registered")
        if not isinstance(siren, str) or not siren or type(registered) is not bool:
            raise OperatorError(400, "siren (string) and registered (boolean) are required")
        store = self.server.store
        with store.lock:
            store.set_registered(siren, registered)
            self._json(200, store.snapshot())


def _post(delivery: Delivery) -> int | str:
    """One delivery's HTTP status, or why it got none."""
    try:
        return requests.post(delivery.url, data=delivery.body, headers=delivery.headers, timeout=10,
                             allow_redirects=False).status_code
    except requests.RequestException as exc:
        return type(exc).__name__


class AfnorSimulator(BackgroundSimulator):
    """The simulator as an object: `start()`, `stop()`, `flow_url`, `directory_url`, `token_url`."""

    def __init__(self, *, client_id: str, client_secret: str, host: str = "127.0.0.1", port: int = 0,
                 settings: Settings | None = None, callback_url: str | None = None,
                 callback_secret: str | None = None) -> None:
        super().__init__(Handler, host=host, port=port, name="afnor-simulator")
        self.flow_url = self.url + FLOW_SERVICE
        self.directory_url = self.url + DIRECTORY_SERVICE
        self.token_url = f"{self.url}/oauth/token"
        self.store = AfnorStore(client_id=client_id, client_secret=client_secret,
                                settings=settings or Settings(scope=DEFAULT_SCOPE), callback_url=callback_url,
                                callback_secret=callback_secret)
        self.server.store = self.store


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="afnor-simulator", description="AFNOR XP Z12-013 platform simulator")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    # Defaults from the environment, so a supervisor need not put secrets on a command line.
    parser.add_argument("--client-id", default=os.environ.get("AFNOR_CLIENT_ID"))
    parser.add_argument("--client-secret", default=os.environ.get("AFNOR_CLIENT_SECRET"))
    parser.add_argument("--scope", default=os.environ.get("AFNOR_SCOPE") or DEFAULT_SCOPE)
    parser.add_argument("--callback", help="base URL of the API receiving /api/webhooks/afnor (none: no callbacks)")
    parser.add_argument("--callback-secret", default=os.environ.get("AFNOR_WEBHOOK_SECRET"),
                        help="the callbacks' HMAC secret (default: AFNOR_WEBHOOK_SECRET)")
    parser.add_argument("--auto-ok-after", type=float, default=5.0,
                        help="seconds after which a Pending flow is acknowledged Ok (negative: never by itself)")
    args = parser.parse_args(argv)
    if not args.client_id or not args.client_secret:
        parser.error("--client-id and --client-secret (or AFNOR_CLIENT_ID and AFNOR_CLIENT_SECRET) are required")
    if args.callback and not args.callback_secret:
        parser.error("--callback needs --callback-secret (or AFNOR_WEBHOOK_SECRET)")
    settings = Settings(auto_ok_after_seconds=None if args.auto_ok_after < 0 else args.auto_ok_after,
                        scope=args.scope)
    simulator = AfnorSimulator(client_id=args.client_id, client_secret=args.client_secret, host=args.host,
                               port=args.port, settings=settings, callback_url=args.callback,
                               callback_secret=args.callback_secret)
    return run_until_stopped(simulator, f"AFNOR XP Z12-013 platform simulator at {simulator.url}")


if __name__ == "__main__":
    raise SystemExit(main())
