"""State of the e-signature provider simulator: signature requests, fault switches, webhooks.

Everything lives in memory behind one lock. Actions that the provider would report (activation,
a signer opening, signing or declining) produce events, handed to `WebhookSender`, which posts
them HMAC-signed to the callback URL on its own thread, retrying failures with a progressive
backoff like the real provider. The store never moves a request by itself: only API calls and
control actions do.
"""

from __future__ import annotations

import hashlib
import heapq
import hmac
import itertools
import json
import re
import threading
import time
import uuid
from dataclasses import asdict, dataclass, fields

import requests

TERMINAL = frozenset({"done", "declined", "expired", "canceled"})
SIGNATURE_LEVELS = ("electronic_signature", "advanced_electronic_signature", "qualified_electronic_signature")
AUTHENTICATION_MODES = (None, "no_otp", "otp_email", "otp_sms")
E164 = re.compile(r"^\+[1-9]\d{6,14}$")
# Progressive backoff between webhook attempts (seconds); 8 retries after the first send.
DEFAULT_BACKOFF = (5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0)
FIRST_TIMEOUT, RETRY_TIMEOUT = 1.0, 10.0


class ProviderError(Exception):
    """An API answer other than success: HTTP status and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Faults:
    """Fault switches, set through `POST /_control/faults` (unknown names are refused)."""

    reject_parse_anchors: bool = False  # 400 on an upload with parse_anchors=true
    reject_multipart: bool = False  # 400 on any multipart upload (only JSON base64 passes)
    reject_uploads: bool = False  # 400 on every upload, whatever its encoding
    unauthorized: bool = False  # 401 on every API call, whatever the key
    rate_limited_calls: int = 0  # the next N API calls answer 429
    unavailable_calls: int = 0  # the next N API calls answer 503
    duplicate_webhooks: bool = False  # every event delivered twice (same event_id)
    reverse_webhooks: bool = False  # the events of one action delivered last first
    drop_webhooks: bool = False  # events recorded but never delivered

    def update(self, values: dict) -> None:
        known = {f.name: f.type for f in fields(self)}
        for name, value in values.items():
            if name not in known:
                raise ProviderError(400, f"unknown fault {name!r}")
            expected = bool if known[name] == "bool" else int
            if type(value) is not expected:
                raise ProviderError(400, f"fault {name!r} must be {expected.__name__}")
            setattr(self, name, value)

    def take_api_fault(self) -> ProviderError | None:
        """The fault this API call must answer with, if any (counters are consumed)."""
        if self.unauthorized:
            return ProviderError(401, "Unauthorized")
        if self.rate_limited_calls > 0:
            self.rate_limited_calls -= 1
            return ProviderError(429, "Too Many Requests")
        if self.unavailable_calls > 0:
            self.unavailable_calls -= 1
            return ProviderError(503, "Service Unavailable")
        return None


def sign_body(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class WebhookSender:
    """Delivers events one at a time, in order, on a thread of its own; failures are retried."""

    def __init__(self, callback_url: str | None, secret: str, backoff: tuple[float, ...] = DEFAULT_BACKOFF) -> None:
        self.url = f"{callback_url.rstrip('/')}/api/webhooks/esign" if callback_url else None
        self.secret = secret
        self.backoff = backoff
        self.deliveries: list[dict] = []  # every attempt, for tests and the control API
        self._heap: list[tuple[float, int, dict, int]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._stopped = False
        self._busy = False
        self._thread = threading.Thread(target=self._run, name="esign-webhooks", daemon=True)
        self._thread.start()

    def send(self, events: list[dict], faults: Faults) -> None:
        if faults.drop_webhooks or self.url is None:
            with self._cond:
                self.deliveries.extend({"eventId": e["event_id"], "eventName": e["event_name"],
                                        "attempt": 0, "status": "dropped"} for e in events)
            return
        ordered = list(reversed(events)) if faults.reverse_webhooks else events
        copies = 2 if faults.duplicate_webhooks else 1
        with self._cond:
            for event in ordered:
                for _ in range(copies):
                    heapq.heappush(self._heap, (time.monotonic(), next(self._seq), event, 1))
            self._cond.notify()

    def idle(self) -> bool:
        with self._cond:
            return not self._heap and not self._busy

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        self._thread.join(timeout=15)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._stopped and (not self._heap or self._heap[0][0] > time.monotonic()):
                    self._cond.wait(None if not self._heap else max(0.0, self._heap[0][0] - time.monotonic()))
                if self._stopped:
                    return
                _, _, event, attempt = heapq.heappop(self._heap)
                self._busy = True
            status = self._deliver(event, attempt)
            with self._cond:
                self._busy = False
                self.deliveries.append({"eventId": event["event_id"], "eventName": event["event_name"],
                                        "attempt": attempt, "status": status})
                ok = isinstance(status, int) and 200 <= status < 300
                if not ok and attempt <= len(self.backoff):
                    due = time.monotonic() + self.backoff[attempt - 1]
                    heapq.heappush(self._heap, (due, next(self._seq), event, attempt + 1))

    def _deliver(self, event: dict, attempt: int) -> int | str:
        body = json.dumps(event, separators=(",", ":")).encode()
        headers = {
            "Content-Type": "application/json",
            "X-Esign-Signature-256": sign_body(self.secret, body),
            "X-Esign-Issued-At": str(int(time.time())),
            "X-Esign-Retry": str(attempt),
        }
        timeout = FIRST_TIMEOUT if attempt == 1 else RETRY_TIMEOUT
        try:
            return requests.post(self.url, data=body, headers=headers, timeout=timeout).status_code
        except requests.RequestException as exc:
            return type(exc).__name__


class Store:
    """Signature requests by id, with the provider's rules for each call."""

    def __init__(self, base_url: str, sender: WebhookSender) -> None:
        self.base_url = base_url
        self.sender = sender
        self.faults = Faults()
        self.lock = threading.Lock()
        self.requests: dict[str, dict] = {}

    # --- provider API -------------------------------------------------------------------------

    def create_request(self, body: dict) -> dict:
        name = body.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ProviderError(400, "name is required")
        if body.get("delivery_mode") not in ("email", "none"):
            raise ProviderError(400, "delivery_mode must be email or none")
        locale = (body.get("info") or {}).get("locale") if isinstance(body.get("info"), dict) else None
        request = {
            "id": str(uuid.uuid4()), "status": "draft", "name": name, "external_id": body.get("external_id"),
            "delivery_mode": body["delivery_mode"], "ordered_signers": bool(body.get("ordered_signers")),
            "info": {"locale": locale or "en"}, "created_at": int(time.time()), "documents": [], "signers": [],
        }
        with self.lock:
            self.requests[request["id"]] = request
        return self.view(request)

    def add_document(self, request_id: str, *, filename: str, content: bytes, parse_anchors: bool,
                     multipart: bool) -> dict:
        if self.faults.reject_uploads:
            raise ProviderError(400, "upload refused")
        if multipart and self.faults.reject_multipart:
            raise ProviderError(400, "multipart upload refused")
        if parse_anchors and self.faults.reject_parse_anchors:
            raise ProviderError(400, "anchor parsing failed")
        if not content.startswith(b"%PDF"):
            raise ProviderError(400, "the document is not a PDF")
        with self.lock:
            request = self._draft(request_id)
            document = {"id": str(uuid.uuid4()), "nature": "signable_document", "filename": filename,
                        "parse_anchors": parse_anchors, "content": content}
            request["documents"].append(document)
            return {k: v for k, v in document.items() if k != "content"}

    def add_signer(self, request_id: str, body: dict) -> dict:
        info = body.get("info") if isinstance(body.get("info"), dict) else {}
        level = body.get("signature_level", "electronic_signature")
        mode = body.get("signature_authentication_mode")
        if not info.get("email") or not info.get("first_name") or not info.get("last_name"):
            raise ProviderError(400, "info.first_name, info.last_name and info.email are required")
        if level not in SIGNATURE_LEVELS or mode not in AUTHENTICATION_MODES:
            raise ProviderError(400, "unknown signature_level or signature_authentication_mode")
        if mode == "otp_sms" and not E164.match(str(info.get("phone_number") or "")):
            raise ProviderError(400, "otp_sms needs info.phone_number in E.164 form")
        signature_fields = [f for f in body.get("fields") or [] if isinstance(f, dict) and f.get("type") == "signature"]
        if not any(f.get("page") == 1 and "x" in f and "y" in f for f in signature_fields):
            raise ProviderError(400, "a signature field with an explicit position on page 1 is required")
        with self.lock:
            request = self._draft(request_id)
            if level == "qualified_electronic_signature" and not request["ordered_signers"]:
                raise ProviderError(400, "the qualified level requires ordered_signers=true")
            anchored = {d["id"]: d["parse_anchors"] for d in request["documents"]}
            if any(f.get("document_id") not in anchored for f in signature_fields):
                raise ProviderError(400, "a field names an unknown document")
            # Like the provider: the anchors of a document uploaded with parse_anchors=true replace
            # the field's X/Y; a document uploaded without anchor parsing keeps the explicit position.
            signature_fields = [{**f, "placement": "anchor" if anchored[f["document_id"]] else "explicit"}
                                for f in signature_fields]
            signer = {"id": str(uuid.uuid4()), "status": "initiated", "info": info, "signature_level": level,
                      "signature_authentication_mode": mode, "fields": signature_fields, "signature_link": None}
            request["signers"].append(signer)
            return self._signer_view(signer)

    def activate(self, request_id: str) -> dict:
        with self.lock:
            request = self._draft(request_id)
            if not request["documents"] or not request["signers"]:
                raise ProviderError(400, "a request needs a document and a signer before activation")
            request["status"] = "ongoing"
            for signer in request["signers"]:
                signer["status"] = "notified" if request["delivery_mode"] == "email" else "ready"
                signer["signature_link"] = f"{self.base_url}/sign/{request['id']}"
            events = [self._event("signature_request.activated", request)]
            if request["delivery_mode"] == "email":
                events += [self._event("signer.notified", request, s) for s in request["signers"]]
            view = self.view(request)
        self.sender.send(events, self.faults)
        return view

    def cancel(self, request_id: str) -> dict:
        return self.act(request_id, "cancel")

    def get(self, request_id: str) -> dict:
        with self.lock:
            return self.view(self._find(request_id))

    def get_signer(self, request_id: str, signer_id: str) -> dict:
        with self.lock:
            for signer in self._find(request_id)["signers"]:
                if signer["id"] == signer_id:
                    return self._signer_view(signer)
        raise ProviderError(404, "signer not found")

    def download_document(self, request_id: str, document_id: str) -> bytes:
        with self.lock:
            request = self._find(request_id)
            for document in request["documents"]:
                if document["id"] == document_id:
                    if request["status"] != "done":
                        return document["content"]
                    return document["content"] + f"\n% signed at esign simulator {request_id}\n".encode()
        raise ProviderError(404, "document not found")

    def audit_trail(self, request_id: str, signer_id: str) -> bytes:
        with self.lock:
            request = self._find(request_id)
            if request["status"] != "done" or signer_id not in {s["id"] for s in request["signers"]}:
                raise ProviderError(404, "no audit trail for this signer")
            return minimal_pdf(f"Audit trail {request_id} signer {signer_id}")

    # --- control actions ----------------------------------------------------------------------

    def act(self, request_id: str, action: str, event_name: str | None = None) -> dict:
        """A signer or operator action: open, sign, decline, expire, cancel, or emit an event."""
        with self.lock:
            request = self._find(request_id)
            if action == "emit":
                events = [self._event(event_name or "", request, (request["signers"] or [None])[0])]
            else:
                events = self._apply(request, action)
            view = self.view(request)
        self.sender.send(events, self.faults)
        return view

    def _apply(self, request: dict, action: str) -> list[dict]:
        if action == "cancel":
            if request["status"] in TERMINAL:
                raise ProviderError(400, f"a {request['status']} request cannot be canceled")
            request["status"] = "canceled"
            return [self._event("signature_request.canceled", request)]
        if request["status"] != "ongoing":
            raise ProviderError(409, f"the request is {request['status']}, not ongoing")
        if action == "expire":
            request["status"] = "expired"
            return [self._event("signature_request.expired", request)]
        signer = next(s for s in request["signers"] if s["status"] != "signed")
        if action == "open":
            signer["status"] = "processing"
            return [self._event("signer.link_opened", request, signer)]
        if action == "decline":
            signer["status"] = "declined"
            request["status"] = "declined"
            return [self._event("signer.declined", request, signer),
                    self._event("signature_request.declined", request)]
        signer["status"] = "signed"
        events = [self._event("signer.done", request, signer)]
        if all(s["status"] == "signed" for s in request["signers"]):
            request["status"] = "done"
            events.append(self._event("signature_request.done", request))
        return events

    # --- helpers ------------------------------------------------------------------------------

    def _find(self, request_id: str) -> dict:
        request = self.requests.get(request_id)
        if request is None:
            raise ProviderError(404, "signature request not found")
        return request

    def _draft(self, request_id: str) -> dict:
        request = self._find(request_id)
        if request["status"] != "draft":
            raise ProviderError(400, f"the request is {request['status']}, not draft")
        return request

    @staticmethod
    def _event(name: str, request: dict, signer: dict | None = None) -> dict:
        data: dict = {"signature_request": {"id": request["id"], "status": request["status"],
                                            "external_id": request["external_id"]}}
        if signer is not None:
            data["signer"] = {"id": signer["id"], "status": signer["status"]}
        return {"event_id": str(uuid.uuid4()), "event_name": name, "event_time": str(int(time.time())),
                "sandbox": True, "data": data}

    def view(self, request: dict) -> dict:
        out = {k: v for k, v in request.items() if k not in ("documents", "signers")}
        out["documents"] = [{k: v for k, v in d.items() if k != "content"} for d in request["documents"]]
        out["signers"] = [self._signer_view(s) for s in request["signers"]]
        return out

    @staticmethod
    def _signer_view(signer: dict) -> dict:
        return {**signer, "info": dict(signer["info"])}

    def snapshot_faults(self) -> dict:
        return asdict(self.faults)


def minimal_pdf(text: str) -> bytes:
    """A one-page PDF showing `text` (ASCII), small but well formed."""
    safe = text.encode("ascii", "replace").decode().replace("\\", "").replace("(", "").replace(")", "")
    stream = f"BT /F1 12 Tf 72 720 Td ({safe}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)
