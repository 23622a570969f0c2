"""`POST /api/webhooks/afnor`: an XP Z12-013 platform's callbacks, acknowledged once stored."""

from __future__ import annotations

from api.access import SIGNATURE, Route
from api.operations import operation
from api.requests import JSON_BODY_LIMIT
from backend.config import Config
from backend.einvoicing.afnor_callbacks import ISSUED_AT_HEADER, SIGNATURE_HEADER, receive_callback
from backend.errors import PayloadTooLarge
from schemas.einvoicing.callbacks import CallbackAckOut, PlatformCallbackIn


class AfnorCallback:
    max_body_bytes = JSON_BODY_LIMIT

    def __init__(self, config: Config) -> None:
        self._secret = config.afnor_webhook_secret

    @operation(
        "AFNOR XP Z12-013 platform callback (HMAC-authenticated)",
        description=(
            "Annex A's `WebhookCallbackContent` (`{flowInfo: Flow}`). `X-Webhook-Signature-256` is "
            "`sha256=<hex HMAC-SHA256 of the raw body>` keyed with `AFNOR_WEBHOOK_SECRET`; "
            "`X-Webhook-Issued-At` (Unix seconds) must be within 300 s of now; otherwise 401 "
            "`AUTH_SIGNATURE_WEBHOOK_INVALID`. A callback is stored once per flow state (flowId and "
            "updatedAt) and processed asynchronously: the flow is read again from the platform and "
            "applied as polling applies it. A duplicate answers `duplicate: true`."
        ),
        tags=("webhooks",),
        body=PlatformCallbackIn,
        raw_body=True,
        answer=CallbackAckOut,
        answer_description="the callback is stored (or was already)",
        errors={400: "VALIDATION_ERROR: signed, but not a callback naming a flow (flowInfo.flowId)",
                401: "AUTH_SIGNATURE_WEBHOOK_INVALID: bad signature, issued-at missing or outside 300 s, "
                     "or AFNOR_WEBHOOK_SECRET unset"},
    )
    def on_post(self, req, resp) -> dict:
        raw = req.bounded_stream.read(self.max_body_bytes + 1)
        if len(raw) > self.max_body_bytes:
            raise PayloadTooLarge(f"the body exceeds {self.max_body_bytes} bytes")
        return receive_callback(body=raw, signature=req.get_header(SIGNATURE_HEADER),
                                issued_at=req.get_header(ISSUED_AT_HEADER), secret=self._secret)


def routes(deps) -> list[Route]:
    return [Route("/api/webhooks/afnor", AfnorCallback(deps.config), SIGNATURE)]
