"""`POST /api/webhooks/odp`: the operator's webhook is deprecated (Specification C): 410 Gone with
`WEBHOOK_DEPRECATED`. Status progress comes only from polling. A flood cannot fill the logs: the
route is rate-limited per client (`api.ratelimit`, `deprecated-webhook`), and the warning is
sampled, at most one a minute per process, counting the calls it stands for."""

from __future__ import annotations

import threading
import time

from api.access import PUBLIC, Route
from api.clientip import client_ip
from api.operations import operation
from backend.errors import WebhookDeprecated
from backend.logs import log_event


class Sample:
    """At most one event per `seconds`: `take()` answers how many calls the one it lets through
    stands for (itself and those skipped since the last), or 0 to skip this one."""

    def __init__(self, seconds: float = 60.0, monotonic=time.monotonic) -> None:
        self._seconds, self._monotonic = seconds, monotonic
        self._lock = threading.Lock()
        self._next, self._skipped = float("-inf"), 0

    def take(self) -> int:
        with self._lock:
            now = self._monotonic()
            if now < self._next:
                self._skipped += 1
                return 0
            calls, self._skipped, self._next = self._skipped + 1, 0, now + self._seconds
            return calls


class OdpWebhook:
    uses_database = False

    def __init__(self, trusted_proxy_count: int) -> None:
        self._trusted_proxy_count = trusted_proxy_count
        self._warnings = Sample()

    @operation(
        "Deprecated e-invoicing operator webhook: always 410 `WEBHOOK_DEPRECATED`",
        description="The body is neither read nor stored; the caller is logged. Statuses come from polling.",
        tags=("webhooks",), produces="application/json",
    )
    def on_post(self, req, resp) -> None:
        if calls := self._warnings.take():
            log_event("einvoicing.webhook.deprecated", "call to the deprecated operator webhook", level="warn",
                      calls=calls, clientIp=client_ip(req, self._trusted_proxy_count),
                      userAgent=req.get_header("User-Agent"), contentType=req.content_type,
                      contentLength=req.content_length)
        raise WebhookDeprecated("the operator webhook is deprecated: transmission statuses are obtained by polling")


def routes(deps) -> list[Route]:
    return [Route("/api/webhooks/odp", OdpWebhook(deps.config.trusted_proxy_count), PUBLIC)]
