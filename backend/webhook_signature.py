"""The signature of an inbound webhook, the one rule every provider's deliveries are held to.

The HMAC-SHA256 of the raw body, keyed with the shared secret, written `sha256=<hex>`, must equal
the delivery's signature header (compared in constant time), and its issued-at header (Unix
seconds) must lie within `MAX_CLOCK_SKEW_SECONDS` of now (a replayed old delivery is refused).
API.md, "AUTH_SIGNATURE_WEBHOOK_INVALID"."""

from __future__ import annotations

import hashlib
import hmac

from backend import clock
from backend.errors import WebhookSignatureInvalid
from backend.logs import log_event

MAX_CLOCK_SKEW_SECONDS = 300


def signature_of(body: bytes, secret: str) -> str:
    """The signature header a delivery of `body` carries: `sha256=<hex HMAC-SHA256>`."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(*, body: bytes, signature: str | None, issued_at: str | None, secret: str | None, scope: str) -> None:
    """Raise WebhookSignatureInvalid (401 `AUTH_SIGNATURE_WEBHOOK_INVALID`) unless the body is
    signed with `secret` and recently issued; the refusal is logged under `scope`, with its reason,
    never the secret nor the signature."""
    reason = _refusal(body, signature, issued_at, secret)
    if reason is not None:
        log_event(scope, "webhook refused", "warn", reason=reason, bodyBytes=len(body))
        raise WebhookSignatureInvalid("the webhook signature is invalid", reason=reason)


def _refusal(body: bytes, signature: str | None, issued_at: str | None, secret: str | None) -> str | None:
    if not secret:
        return "secret_not_configured"
    if not hmac.compare_digest(signature_of(body, secret).encode(), (signature or "").strip().encode()):
        return "signature_mismatch"
    try:
        issued = int((issued_at or "").strip())
    except ValueError:
        return "issued_at_missing" if not (issued_at or "").strip() else "issued_at_invalid"
    if abs(clock.now().timestamp() - issued) > MAX_CLOCK_SKEW_SECONDS:
        return "issued_at_out_of_window"
    return None
