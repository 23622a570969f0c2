"""`POST /api/webhooks/esign`: the e-signature provider's events, acknowledged once stored."""

from __future__ import annotations

from api.access import SIGNATURE, Route
from api.operations import operation
from api.requests import JSON_BODY_LIMIT
from backend.config import Config
from backend.errors import PayloadTooLarge
from backend.onboarding.webhook import receive_signature_webhook
from schemas.onboarding.envelopes import EsignWebhookEventIn, WebhookAckOut


class EsignWebhook:
    max_body_bytes = JSON_BODY_LIMIT

    def __init__(self, config: Config) -> None:
        self._secret = config.esign_webhook_secret

    @operation(
        "E-signature provider webhook (HMAC-authenticated)",
        description=(
            "`X-Esign-Signature-256` is `sha256=<hex HMAC-SHA256 of the raw body>` keyed with the "
            "shared secret; `X-Esign-Issued-At` (Unix seconds) must be within 300 s of now; otherwise "
            "401 `AUTH_SIGNATURE_WEBHOOK_INVALID`. Events are stored once per `event_id` and "
            "processed asynchronously; a duplicate answers `duplicate: true` and is not processed "
            "again."
        ),
        tags=("webhooks",),
        body=EsignWebhookEventIn,
        raw_body=True,
        answer=WebhookAckOut,
        answer_description="the event is stored (or was already)",
        errors={400: "VALIDATION_ERROR: signed, but not an object with event_id and event_name",
                401: "AUTH_SIGNATURE_WEBHOOK_INVALID: bad signature, issued-at missing or outside 300 s"},
    )
    def on_post(self, req, resp) -> dict:
        raw = req.bounded_stream.read(self.max_body_bytes + 1)
        if len(raw) > self.max_body_bytes:
            raise PayloadTooLarge(f"the body exceeds {self.max_body_bytes} bytes")
        return receive_signature_webhook(
            body=raw,
            signature=req.get_header("X-Esign-Signature-256"),
            issued_at=req.get_header("X-Esign-Issued-At"),
            retry=req.get_header("X-Esign-Retry"),
            secret=self._secret,
        )


def routes(deps) -> list[Route]:
    return [Route("/api/webhooks/esign", EsignWebhook(deps.config), SIGNATURE)]
