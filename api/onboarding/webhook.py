"""`POST /api/webhooks/esign`: the e-signature provider's events, acknowledged once stored."""

from __future__ import annotations

from api.access import SIGNATURE, Route
from api.requests import JSON_BODY_LIMIT
from api.responses import send
from backend.config import Config
from backend.errors import PayloadTooLarge
from backend.onboarding.webhook import receive_signature_webhook


class EsignWebhook:
    max_body_bytes = JSON_BODY_LIMIT

    def __init__(self, config: Config) -> None:
        self._secret = config.esign_webhook_secret

    def on_post(self, req, resp) -> None:
        """Receive one provider event.
        ---
        summary: E-signature provider webhook (HMAC-authenticated)
        description: >-
          `X-Esign-Signature-256` is `sha256=<hex HMAC-SHA256 of the raw body>` keyed with the shared
          secret; `X-Esign-Issued-At` (Unix seconds) must be within 300 s of now; otherwise 401
          `AUTH_SIGNATURE_WEBHOOK_INVALID`. Events are stored once per `event_id` and processed
          asynchronously; a duplicate answers `duplicate: true` and is not processed again.
        tags: [webhooks]
        parameters:
          - {in: header, name: X-Esign-Signature-256, required: true, schema: {type: string}}
          - {in: header, name: X-Esign-Issued-At, required: true, schema: {type: string}}
          - {in: header, name: X-Esign-Retry, required: false, schema: {type: string}}
        requestBody:
          required: true
          content:
            application/json:
              schema: EsignWebhookEventIn
        responses:
          200:
            description: the event is stored (or was already)
            content:
              application/json:
                schema: WebhookAckEnvelope
          400: {description: "VALIDATION_ERROR: signed, but not an object with event_id and event_name"}
          401: {description: "AUTH_SIGNATURE_WEBHOOK_INVALID: bad signature, issued-at missing or outside 300 s"}
        """
        raw = req.bounded_stream.read(self.max_body_bytes + 1)
        if len(raw) > self.max_body_bytes:
            raise PayloadTooLarge(f"the body exceeds {self.max_body_bytes} bytes")
        send(resp, receive_signature_webhook(
            body=raw,
            signature=req.get_header("X-Esign-Signature-256"),
            issued_at=req.get_header("X-Esign-Issued-At"),
            retry=req.get_header("X-Esign-Retry"),
            secret=self._secret,
        ))


def routes(deps) -> list[Route]:
    return [Route("/api/webhooks/esign", EsignWebhook(deps.config), SIGNATURE)]
