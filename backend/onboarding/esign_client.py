"""HTTP client of the e-signature provider API v3 (`ESIGN_BASE_URL`, ending in `/v3`).

Every call has a connect and a read timeout, and is retried by tenacity on 429, on 5xx and on
network errors, waiting the provider's `Retry-After` when it sends one, else a growing delay.
401/403 raise `ProviderCredentialsInvalid` with a message that says so. The API key travels only
in the `Authorization` header of each request and is never part of a log line.

A creation retried after a 5xx may leave an orphan draft at the provider: drafts are never
activated and the provider expires them, which is cheaper than an envelope that never exists.
"""

from __future__ import annotations

import base64
import logging
import time

import requests

from backend.config import Config
from backend.http_retries import Retryable, retry_after, retrying
from backend.logs import get_logger
from backend.onboarding.provider import (
    ProviderCredentialsInvalid,
    ProviderError,
    ProviderRejected,
    ProviderRequest,
    ProviderSigner,
    SignerInfo,
)

log = get_logger("esign.client")

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
# Where the signature field goes on page 1 when the document carries no anchor (points).
DEFAULT_FIELD = {"page": 1, "x": 77, "y": 600, "width": 180, "height": 60}
# Upload attempts, in order; the next one is tried only when the provider answers 400.
UPLOAD_CHAIN = (("multipart", True), ("multipart", False), ("json", False))


class EsignClient:
    """`SignatureProvider` for the provider API v3."""

    def __init__(self, base_url: str, api_key: str | None, *, connect_timeout: float = 5.0,
                 read_timeout: float = 30.0, attempts: int = 4, backoff_seconds: float = 0.5,
                 max_backoff_seconds: float = 8.0, session: requests.Session | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.timeout = (connect_timeout, read_timeout)
        self.attempts = attempts
        self.backoff_seconds = backoff_seconds
        self.max_backoff_seconds = max_backoff_seconds
        self.session = session or requests.Session()

    @classmethod
    def from_config(cls, config: Config) -> EsignClient:
        return cls(config.esign_base_url, config.esign_api_key)

    def __repr__(self) -> str:  # never the key
        return f"EsignClient({self.base_url!r})"

    # --- SignatureProvider --------------------------------------------------------------------

    def create_request(self, *, name: str, external_id: str, delivery_mode: str, ordered_signers: bool,
                       locale: str) -> str:
        body = {"name": name, "external_id": external_id, "delivery_mode": delivery_mode,
                "ordered_signers": ordered_signers, "info": {"locale": locale}}
        return self._call("POST", "/signature_requests", json=body).json()["id"]

    def upload_document(self, request_id: str, *, filename: str, content: bytes) -> str:
        """Multipart with `parse_anchors=true`; on a 400, `parse_anchors=false`; then JSON base64."""
        path = f"/signature_requests/{request_id}/documents"
        for position, (encoding, parse_anchors) in enumerate(UPLOAD_CHAIN):
            try:
                if encoding == "multipart":
                    response = self._call("POST", path, files={"file": (filename, content, "application/pdf")},
                                          data={"nature": "signable_document",
                                                "parse_anchors": "true" if parse_anchors else "false"})
                else:
                    response = self._call("POST", path, json={
                        "file_name": filename, "nature": "signable_document", "parse_anchors": False,
                        "file_content": base64.b64encode(content).decode()})
                return response.json()["id"]
            except ProviderRejected as exc:
                if exc.status != 400 or position == len(UPLOAD_CHAIN) - 1:
                    raise
                log.warning("document upload refused; trying the next encoding", extra={"fields": {
                    "providerSignatureRequestId": request_id, "encoding": encoding,
                    "parseAnchors": parse_anchors, "reason": str(exc)}})
        raise AssertionError("unreachable: the chain ends by returning or raising")

    def add_signer(self, request_id: str, *, signer: SignerInfo, signature_level: str,
                   authentication_mode: str | None, document_ids: list[str]) -> str:
        info = {"first_name": signer.first_name, "last_name": signer.last_name, "email": signer.email,
                "locale": signer.locale}
        if signer.phone:
            info["phone_number"] = signer.phone
        body = {
            "info": info,
            "signature_level": signature_level,
            "signature_authentication_mode": authentication_mode,
            "fields": [{"document_id": d, "type": "signature", **DEFAULT_FIELD} for d in document_ids],
        }
        return self._call("POST", f"/signature_requests/{request_id}/signers", json=body).json()["id"]

    def activate(self, request_id: str) -> ProviderRequest:
        return _request(self._call("POST", f"/signature_requests/{request_id}/activate").json())

    def get_request(self, request_id: str) -> ProviderRequest:
        return _request(self._call("GET", f"/signature_requests/{request_id}").json())

    def cancel(self, request_id: str) -> None:
        self._call("POST", f"/signature_requests/{request_id}/cancel", json={"reason": "canceled by the platform"})

    def download_document(self, request_id: str, document_id: str) -> bytes:
        return self._call("GET", f"/signature_requests/{request_id}/documents/{document_id}/download").content

    def download_audit_trail(self, request_id: str, signer_id: str) -> bytes:
        return self._call(
            "GET", f"/signature_requests/{request_id}/signers/{signer_id}/audit_trails/download").content

    # --- transport ----------------------------------------------------------------------------

    def _call(self, method: str, path: str, **kwargs) -> requests.Response:
        if not self._api_key:
            raise ProviderCredentialsInvalid("e-signature provider credentials are invalid: ESIGN_API_KEY is not set")
        try:
            return retrying(attempts=self.attempts, backoff_seconds=self.backoff_seconds,
                            max_backoff_seconds=self.max_backoff_seconds)(self._send, method, path, **kwargs)
        except Retryable as exc:
            raise ProviderError(
                f"the e-signature provider is unavailable ({exc}) after {self.attempts} attempts", status=exc.status
            ) from None

    def _send(self, method: str, path: str, **kwargs) -> requests.Response:
        started = time.monotonic()
        fields = {"method": method, "path": path}
        try:
            response = self.session.request(method, self.base_url + path, timeout=self.timeout,
                                            headers={"Authorization": f"Bearer {self._api_key}"}, **kwargs)
        except (requests.ConnectionError, requests.Timeout) as exc:
            log.warning("e-signature provider unreachable", extra={"fields": {**fields, "error": type(exc).__name__}})
            raise Retryable(type(exc).__name__) from None
        status = response.status_code
        fields.update(status=status, durationMs=round((time.monotonic() - started) * 1000))
        level = logging.INFO if status < 400 else logging.WARNING
        log.log(level, "e-signature provider call", extra={"fields": fields})
        if status in RETRY_STATUSES:
            raise Retryable(f"HTTP {status}", status=status, retry_after=retry_after(response))
        if status in (401, 403):
            raise ProviderCredentialsInvalid(
                f"e-signature provider credentials are invalid or lack a permission (HTTP {status})", status=status)
        if status >= 400:
            raise ProviderRejected(f"the e-signature provider refused {method} {path} (HTTP {status}): "
                                   f"{response.text[:300]}", status=status)
        return response


def _request(body: dict) -> ProviderRequest:
    return ProviderRequest(
        id=body["id"],
        status=body["status"],
        signers=tuple(
            ProviderSigner(s["id"], s.get("status"), s.get("signature_link")) for s in body.get("signers", [])
        ),
        document_ids=tuple(d["id"] for d in body.get("documents", [])),
    )
