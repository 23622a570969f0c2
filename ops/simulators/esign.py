"""E-signature provider simulator: the provider API v3 over HTTP, a signer page, control routes.

In-process (tests): `EsignSimulator(callback_url=..., secret=..., api_key=...).start()`, then
`sim.api_url` is the `ESIGN_BASE_URL` to give the client; `stop()` ends it. As a process
(`vitrine dev`): `python -m ops.simulators.esign --port P --callback URL --secret S --api-key K`
(secret and key default to `ESIGN_WEBHOOK_SECRET` and `ESIGN_API_KEY`).

Routes:
- `/v3/signature_requests[...]`: the provider API (`Authorization: Bearer <api key>`, else 401);
- `GET /sign/{id}`: the signer page, with Open, Sign and Decline buttons;
- `POST /_control/signature_requests/{id}/{open|sign|decline|expire}` answers `{id, status}`
  and sends the matching webhooks; `.../emit` with `{event_name}` sends any event as is;
- `GET|POST /_control/faults`, `GET /_control/deliveries`, `POST /_control/reset`.
"""

from __future__ import annotations

import argparse
import base64
import hmac
import html
import json
import os
import re
from email.parser import BytesParser
from email.policy import HTTP

from ops.simulators.esign_store import DEFAULT_BACKOFF, Faults, ProviderError, Store, WebhookSender
from ops.simulators.server import BackgroundSimulator, SimulatorHandler, run_until_stopped

MAX_BODY = 20 * 1024 * 1024


def _routes():
    """(method, pattern, handler name, needs the API key)."""
    sr = r"/v3/signature_requests/(?P<rid>[^/]+)"
    return [
        ("POST", r"/v3/signature_requests", "api_create", True),
        ("GET", sr, "api_get", True),
        ("POST", sr + r"/documents", "api_add_document", True),
        ("GET", sr + r"/documents/(?P<did>[^/]+)/download", "api_download", True),
        ("POST", sr + r"/signers", "api_add_signer", True),
        ("GET", sr + r"/signers/(?P<sid>[^/]+)", "api_get_signer", True),
        ("GET", sr + r"/signers/(?P<sid>[^/]+)/audit_trails/download", "api_audit_trail", True),
        ("POST", sr + r"/activate", "api_activate", True),
        ("POST", sr + r"/cancel", "api_cancel", True),
        ("GET", r"/sign/(?P<rid>[^/]+)", "page_sign", False),
        ("POST", r"/sign/(?P<rid>[^/]+)/(?P<action>open|sign|decline)", "page_action", False),
        ("POST", r"/_control/signature_requests/(?P<rid>[^/]+)/(?P<action>open|sign|decline|expire)",
         "control_action", False),
        ("POST", r"/_control/signature_requests/(?P<rid>[^/]+)/emit", "control_emit", False),
        ("GET", r"/_control/faults", "control_get_faults", False),
        ("POST", r"/_control/faults", "control_set_faults", False),
        ("GET", r"/_control/deliveries", "control_deliveries", False),
        ("POST", r"/_control/reset", "control_reset", False),
    ]


ROUTES = [(method, re.compile(f"^{pattern}$"), name, keyed) for method, pattern, name, keyed in _routes()]


class Handler(SimulatorHandler):
    def _dispatch(self, method: str) -> None:
        path = self.path.split("?", 1)[0].rstrip("/") or "/"
        for route_method, pattern, name, keyed in ROUTES:
            match = pattern.match(path)
            if match is None or route_method != method:
                continue
            try:
                self._body = self._read_body()
                if keyed:
                    self._check_api_call()
                getattr(self, name)(**match.groupdict())
            except ProviderError as exc:
                self._json(exc.status, {"error": exc.message})
            return
        self.close_connection = True  # the body of an unknown route is left unread
        self._json(404, {"error": "not found"})

    # --- plumbing -----------------------------------------------------------------------------

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self.close_connection = True  # the unread body must not be taken for the next request
            raise ProviderError(413, "body too large")
        return self.rfile.read(length) if length else b""

    def _check_api_call(self) -> None:
        store = self.server.store
        with store.lock:
            fault = store.faults.take_api_fault()
        if fault is not None:
            raise fault
        scheme, _, key = (self.headers.get("Authorization") or "").partition(" ")
        if scheme != "Bearer" or not hmac.compare_digest(key.encode(), self.server.api_key.encode()):
            raise ProviderError(401, "Unauthorized")

    def _json_body(self) -> dict:
        try:
            body = json.loads(self._body or b"{}")
        except ValueError:
            raise ProviderError(400, "invalid JSON") from None
        if not isinstance(body, dict):
            raise ProviderError(400, "a JSON object is expected")
        return body

    def _send(self, status: int, body: bytes, content_type: str, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if status == 429:
            self.send_header("Retry-After", "0")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, data: object) -> None:
        self._send(status, json.dumps(data).encode(), "application/json")

    # --- provider API -------------------------------------------------------------------------

    def api_create(self) -> None:
        self._json(201, self.server.store.create_request(self._json_body()))

    def api_get(self, rid: str) -> None:
        self._json(200, self.server.store.get(rid))

    def api_add_document(self, rid: str) -> None:
        content_type = self.headers.get("Content-Type") or ""
        if content_type.startswith("multipart/form-data"):
            filename, content, parse_anchors = self._multipart_document(content_type)
            multipart = True
        else:
            body = self._json_body()
            try:
                content = base64.b64decode(body.get("file_content") or "", validate=True)
            except ValueError:
                raise ProviderError(400, "file_content must be base64") from None
            filename, parse_anchors, multipart = body.get("file_name") or "document.pdf", False, False
        self._json(201, self.server.store.add_document(
            rid, filename=filename, content=content, parse_anchors=parse_anchors, multipart=multipart))

    def _multipart_document(self, content_type: str) -> tuple[str, bytes, bool]:
        message = BytesParser(policy=HTTP).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + self._body)
        filename, content, parse_anchors = "document.pdf", b"", False
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if name == "file":
                filename = part.get_filename() or filename
                content = part.get_payload(decode=True) or b""
            elif name == "parse_anchors":
                parse_anchors = (part.get_payload(decode=True) or b"").strip().lower() == b"true"
        return filename, content, parse_anchors

    def api_download(self, rid: str, did: str) -> None:
        self._send(200, self.server.store.download_document(rid, did), "application/pdf")

    def api_add_signer(self, rid: str) -> None:
        self._json(201, self.server.store.add_signer(rid, self._json_body()))

    def api_get_signer(self, rid: str, sid: str) -> None:
        self._json(200, self.server.store.get_signer(rid, sid))

    def api_audit_trail(self, rid: str, sid: str) -> None:
        self._send(200, self.server.store.audit_trail(rid, sid), "application/pdf")

    def api_activate(self, rid: str) -> None:
        self._json(201, self.server.store.activate(rid))

    def api_cancel(self, rid: str) -> None:
        self._json(201, self.server.store.cancel(rid))

    # --- signer page --------------------------------------------------------------------------

    def page_sign(self, rid: str) -> None:
        request = self.server.store.get(rid)
        buttons = "".join(
            f'<form method="post" action="/sign/{html.escape(rid)}/{action}">'
            f'<button type="submit">{label}</button></form>'
            for action, label in (("open", "Open"), ("sign", "Sign"), ("decline", "Decline"))
        )
        documents = "".join(f"<li>{html.escape(d['filename'])}</li>" for d in request["documents"])
        page = (
            f"<!doctype html><html lang=\"fr\"><head><meta charset=\"utf-8\"><title>Signature</title></head>"
            f"<body><h1>{html.escape(request['name'])}</h1><p>Status: <strong id=\"status\">"
            f"{html.escape(request['status'])}</strong></p><ul>{documents}</ul>"
            f"{buttons if request['status'] == 'ongoing' else ''}</body></html>"
        )
        self._send(200, page.encode(), "text/html; charset=utf-8")

    def page_action(self, rid: str, action: str) -> None:
        self.server.store.act(rid, action)
        self._send(303, b"", "text/plain", {"Location": f"/sign/{rid}"})

    # --- control ------------------------------------------------------------------------------

    def control_action(self, rid: str, action: str) -> None:
        request = self.server.store.act(rid, action)
        self._json(200, {"id": request["id"], "status": request["status"]})

    def control_emit(self, rid: str) -> None:
        event_name = self._json_body().get("event_name")
        if not isinstance(event_name, str) or not event_name:
            raise ProviderError(400, "event_name is required")
        request = self.server.store.act(rid, "emit", event_name)
        self._json(200, {"id": request["id"], "status": request["status"]})

    def control_get_faults(self) -> None:
        self._json(200, self.server.store.snapshot_faults())

    def control_set_faults(self) -> None:
        store = self.server.store
        with store.lock:
            store.faults.update(self._json_body())
        self._json(200, store.snapshot_faults())

    def control_deliveries(self) -> None:
        self._json(200, {"deliveries": list(self.server.store.sender.deliveries)})

    def control_reset(self) -> None:
        store = self.server.store
        with store.lock:
            store.requests.clear()
            store.faults = Faults()
        self._json(200, {"reset": True})


class EsignSimulator(BackgroundSimulator):
    """The simulator as an object: `start()`, `stop()`, `url` (signer pages) and `api_url` (/v3)."""

    def __init__(self, *, callback_url: str | None, secret: str, api_key: str, host: str = "127.0.0.1",
                 port: int = 0, backoff: tuple[float, ...] = DEFAULT_BACKOFF) -> None:
        super().__init__(Handler, host=host, port=port, name="esign-simulator")
        self.server.api_key = api_key
        self.api_url = f"{self.url}/v3"
        self.sender = WebhookSender(callback_url, secret, backoff)
        self.store = Store(self.url, self.sender)
        self.server.store = self.store

    def stop(self) -> None:
        super().stop()
        self.sender.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="esign-simulator", description="E-signature provider simulator")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--callback", help="base URL of the API receiving /api/webhooks/esign")
    # Defaults from the environment, so a supervisor need not put secrets on a command line.
    parser.add_argument("--secret", default=os.environ.get("ESIGN_WEBHOOK_SECRET"),
                        help="webhook HMAC secret (default: ESIGN_WEBHOOK_SECRET)")
    parser.add_argument("--api-key", default=os.environ.get("ESIGN_API_KEY"),
                        help="API key expected as Bearer (default: ESIGN_API_KEY)")
    parser.add_argument("--backoff-scale", type=float, default=1.0,
                        help="multiplies the webhook retry delays (below 1 to retry faster)")
    args = parser.parse_args(argv)
    if not args.secret or not args.api_key:
        parser.error("--secret and --api-key (or ESIGN_WEBHOOK_SECRET and ESIGN_API_KEY) are required")
    simulator = EsignSimulator(
        callback_url=args.callback, secret=args.secret, api_key=args.api_key, host=args.host, port=args.port,
        backoff=tuple(delay * args.backoff_scale for delay in DEFAULT_BACKOFF),
    )
    return run_until_stopped(simulator, f"e-signature simulator at {simulator.api_url}")


if __name__ == "__main__":
    raise SystemExit(main())
