"""E-invoicing operator simulator: OAuth token endpoint, the public e-invoicing API, control routes.

In-process (tests): `OdpSimulator(client_id=..., client_secret=..., entity_id=...).start()`, then
`sim.url` is the `ODP_BASE_URL` and `sim.token_url` the `ODP_TOKEN_URL` to give the client;
`stop()` ends it. As a process (`vitrine dev`, port P+2): `python -m ops.simulators.odp --port P`
(credentials default to `ODP_CLIENT_ID`, `ODP_CLIENT_SECRET`, `ODP_ENTITY_ID`).

Routes:
- `POST /oauth/token`: `grant_type=client_credentials` with the client id and secret (form fields or
  HTTP Basic) and the scope (`settings.scope`); 401 `invalid_client`, 400 `invalid_scope`;
- `POST /public/einvoicing/v1/flows`: multipart with a `file` part and a `flowInfo` plain field
  (JSON `{entityId, flowSyntax, processingRule, trackingId, name, sha256, flowType?}`): the invoice
  PDF (`Factur-X`), or with `flowType: CustomerInvoiceLC` and `flowSyntax: CDAR` a status the
  platform issues, a CDAR message checked like the platform checks it (`cdar_validation`: 400 with
  every problem found); 400 when `flowInfo` is missing or sent as a file part, or when the sha256
  is not the file's; 409
  `{flowId}` for a duplicate trackingId when `reject_duplicates`; answers 201 the flow;
- `POST /public/einvoicing/v1/flows/search`: `{where: {flowMode, flowId?, trackingId?,
  updatedAfter?}, limit, offset}` answers `{results, total, limit, offset}` (submission order);
- `POST /public/directory/v1/directory-line/search`: `{filters: {addressingIdentifier: {op,
  value}}, limit}` answers `{results, totalNumberOfResults}`;
  these need `Authorization: Bearer <token>` and `X-FlowMode: Sandbox|Production`;
- `POST /_control/flows/{flowId}/{ok|error|archive}` (JSON `{message?, code?}` for error: the
  error's code, e.g. one of the reform's reasons such as `DOUBLON`) sets a status;
  `POST /_control/flows/{flowId}/lifecycle` (JSON `{code, reason?}`) adds a lifecycle status;
- `POST /_control/directory` (`{siren, registered}`), `GET /_control/flows[?trackingId=&flowType=]`
  (a status's flow shows what its message says as `statusReport`: code, label, reason code,
  amounts),
  `GET|POST /_control/faults`, `POST /_control/settings`, `GET /_control/state` (calls, `inFlight`),
  `POST /_control/reset`.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import re
import socket
import time
from email.parser import BytesParser
from email.policy import HTTP
from urllib.parse import parse_qs, urlsplit

from ops.simulators.odp_store import DEFAULT_SCOPE, FLOW_MODES, OperatorError, Settings, Store
from ops.simulators.operator_control import OperatorControl
from ops.simulators.server import BackgroundSimulator, SimulatorHandler, run_until_stopped

MAX_BODY = 20 * 1024 * 1024
FLOWS = "/public/einvoicing/v1/flows"
DIRECTORY = "/public/directory/v1/directory-line/search"

ROUTES = [
    (method, re.compile(f"^{pattern}$"), name, api)
    for method, pattern, name, api in [
        ("POST", r"/oauth/token", "token", False),
        ("POST", FLOWS, "submit", True),
        ("POST", FLOWS + r"/search", "search", True),
        ("POST", DIRECTORY, "directory", True),
        ("POST", r"/_control/flows/(?P<flow_id>[^/]+)/(?P<action>ok|error|archive)", "control_action", False),
        ("POST", r"/_control/flows/(?P<flow_id>[^/]+)/lifecycle", "control_lifecycle", False),
        ("POST", r"/_control/directory", "control_directory", False),
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
        for route_method, pattern, name, api in ROUTES:
            match = pattern.match(path)
            if match is None or route_method != method:
                continue
            store = self.server.store
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
                getattr(self, name if not api else f"api_{name}")(**match.groupdict())
            except _LostAnswer:
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
            except OperatorError as exc:
                self._json(exc.status, {"error": exc.message, **({"flowId": exc.flow_id} if exc.flow_id else {})})
            finally:
                if api:
                    with store.lock:
                        store.in_flight -= 1
            return
        self.close_connection = True
        self._json(404, {"error": "not found"})

    # --- plumbing -----------------------------------------------------------------------------

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self.close_connection = True
            raise OperatorError(413, "body too large")
        return self.rfile.read(length) if length else b""

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
                raise OperatorError(401, "Unauthorized: a Bearer token is required")
            store.check_token(token)
        mode = self.headers.get("X-FlowMode")
        if mode not in FLOW_MODES:
            raise OperatorError(400, "X-FlowMode must be Sandbox or Production")
        self._flow_mode = mode

    def _json_body(self) -> dict:
        try:
            body = json.loads(self._body or b"{}")
        except ValueError:
            raise OperatorError(400, "invalid JSON") from None
        if not isinstance(body, dict):
            raise OperatorError(400, "a JSON object is expected")
        return body

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if status == 429:
            self.send_header("Retry-After", str(self.server.store.settings.retry_after_seconds))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, data: object) -> None:
        self._send(status, json.dumps(data).encode(), "application/json")

    # --- OAuth --------------------------------------------------------------------------------

    def token(self) -> None:
        form = {k: v[0] for k, v in parse_qs(self._body.decode("utf-8", "replace")).items()}
        client_id, client_secret = form.get("client_id", ""), form.get("client_secret", "")
        scheme, _, encoded = (self.headers.get("Authorization") or "").partition(" ")
        if scheme == "Basic":
            try:
                client_id, _, client_secret = base64.b64decode(encoded).decode().partition(":")
            except ValueError:
                raise OperatorError(401, "invalid_client") from None
        self._json(200, self.server.store.issue_token(client_id, client_secret, form.get("grant_type", ""),
                                                      form.get("scope", "")))

    # --- API ----------------------------------------------------------------------------------

    def api_submit(self) -> None:
        content_type = self.headers.get("Content-Type") or ""
        if not content_type.startswith("multipart/form-data"):
            raise OperatorError(415, "multipart/form-data is required")
        message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + self._body)
        flow_info_raw, file_part = None, None
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if name == "flowInfo" and part.get_filename() is None:
                flow_info_raw = part.get_payload(decode=True) or b""
            elif name == "file":
                file_part = part
        if flow_info_raw is None:  # absent, or sent as a file part: not a field
            raise OperatorError(400, "flowInfo is required")
        if file_part is None:
            raise OperatorError(400, "file is required")
        try:
            flow_info = json.loads(flow_info_raw)
        except ValueError:
            raise OperatorError(400, "flowInfo must be a JSON string") from None
        if not isinstance(flow_info, dict):
            raise OperatorError(400, "flowInfo must be a JSON object")
        store = self.server.store
        with store.lock:
            flow = store.submit(flow_mode=self._flow_mode, flow_info=flow_info,
                                filename=file_part.get_filename() or "", content_type=file_part.get_content_type(),
                                content=file_part.get_payload(decode=True) or b"")
            lost = store.faults.take_lost_answer()
        if lost:
            raise _LostAnswer
        self._json(201, flow)

    def api_search(self) -> None:
        body = self._json_body()
        where = body.get("where") or {}
        limit, offset = body.get("limit", 50), body.get("offset", 0)
        if not isinstance(where, dict) or type(limit) is not int or type(offset) is not int \
                or not 1 <= limit <= 100 or offset < 0:
            raise OperatorError(400, "where must be an object, limit within [1, 100], offset >= 0")
        if where.get("flowMode", self._flow_mode) != self._flow_mode:
            raise OperatorError(400, "where.flowMode differs from X-FlowMode")
        store = self.server.store
        with store.lock:
            self._json(200, store.search(flow_mode=self._flow_mode, where=where, limit=limit, offset=offset))

    def api_directory(self) -> None:
        body = self._json_body()
        store = self.server.store
        with store.lock:
            self._json(200, store.directory_search(body))

    # --- control ------------------------------------------------------------------------------

    def control_lifecycle(self, flow_id: str) -> None:
        body = self._json_body()
        store = self.server.store
        with store.lock:
            flow = store.add_lifecycle(flow_id, body.get("code"), body.get("reason"))
        self._json(200, flow)

    def control_directory(self) -> None:
        body = self._json_body()
        siren, registered = body.get("siren"), body.get("registered")
        if not isinstance(siren, str) or not siren or type(registered) is not bool:
            raise OperatorError(400, "siren (string) and registered (boolean) are required")
        store = self.server.store
        with store.lock:
            store.set_registered(siren, registered)
            self._json(200, store.snapshot())

    def control_action(self, flow_id: str, action: str) -> None:
        body = self._json_body()
        message, code = body.get("message"), body.get("code")
        store = self.server.store
        with store.lock:
            flow = store.act(flow_id, action, message if isinstance(message, str) else None,
                             code if isinstance(code, str) else None)
        self._json(200, flow)


class OdpSimulator(BackgroundSimulator):
    """The simulator as an object: `start()`, `stop()`, `url` (API base) and `token_url`."""

    def __init__(self, *, client_id: str, client_secret: str, entity_id: str | None = None, host: str = "127.0.0.1",
                 port: int = 0, settings: Settings | None = None) -> None:
        super().__init__(Handler, host=host, port=port, name="odp-simulator")
        self.token_url = f"{self.url}/oauth/token"
        self.store = Store(client_id=client_id, client_secret=client_secret, entity_id=entity_id, settings=settings)
        self.server.store = self.store


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="odp-simulator", description="E-invoicing operator simulator")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    # Defaults from the environment, so a supervisor need not put secrets on a command line.
    parser.add_argument("--client-id", default=os.environ.get("ODP_CLIENT_ID"))
    parser.add_argument("--client-secret", default=os.environ.get("ODP_CLIENT_SECRET"))
    parser.add_argument("--entity-id", default=os.environ.get("ODP_ENTITY_ID"))
    parser.add_argument("--scope", default=os.environ.get("ODP_SCOPE") or DEFAULT_SCOPE)
    parser.add_argument("--auto-ok-after", type=float, default=5.0,
                        help="seconds after which a Pending flow answers Ok (negative: never by itself)")
    args = parser.parse_args(argv)
    if not args.client_id or not args.client_secret:
        parser.error("--client-id and --client-secret (or ODP_CLIENT_ID and ODP_CLIENT_SECRET) are required")
    settings = Settings(auto_ok_after_seconds=None if args.auto_ok_after < 0 else args.auto_ok_after,
                        scope=args.scope)
    simulator = OdpSimulator(client_id=args.client_id, client_secret=args.client_secret, entity_id=args.entity_id,
                             host=args.host, port=args.port, settings=settings)
    return run_until_stopped(simulator, f"e-invoicing operator simulator at {simulator.url}")


if __name__ == "__main__":
    raise SystemExit(main())
