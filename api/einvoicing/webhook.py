"""`POST /api/webhooks/odp`: the operator's webhook is deprecated (Specification C): 410 Gone with
`WEBHOOK_DEPRECATED`, the caller logged. Status progress comes only from polling."""

from __future__ import annotations

from api.access import PUBLIC, Route
from api.clientip import client_ip
from api.operations import operation
from backend.errors import WebhookDeprecated
from backend.logs import log_event


class OdpWebhook:
    uses_database = False

    def __init__(self, trusted_proxy_count: int) -> None:
        self._trusted_proxy_count = trusted_proxy_count

    @operation(
        "Deprecated e-invoicing operator webhook: always 410 `WEBHOOK_DEPRECATED`",
        description="The body is neither read nor stored; the caller is logged. Statuses come from polling.",
        tags=("webhooks",), produces="application/json",
    )
    def on_post(self, req, resp) -> None:
        log_event("einvoicing.webhook.deprecated", "call to the deprecated operator webhook", level="warn",
                  clientIp=client_ip(req, self._trusted_proxy_count), userAgent=req.get_header("User-Agent"),
                  contentType=req.content_type, contentLength=req.content_length)
        raise WebhookDeprecated("the operator webhook is deprecated: transmission statuses are obtained by polling")


def routes(deps) -> list[Route]:
    return [Route("/api/webhooks/odp", OdpWebhook(deps.config.trusted_proxy_count), PUBLIC)]
