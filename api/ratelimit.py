"""Rate limits of Specification A: fixed one-minute windows per client IP and bucket.

`auth-sensitive` (10/min): sign-in, sign-up, password reset, e-mail verification and the magic
link request. `admin-critical` (60/min): `/api/admin/**`, `/api/auth/assign-role`,
`/api/notifications/email-smoke`. Counters live in memory (`memory://`, exact with one web
process) or, with `RATE_LIMIT_STORAGE_URL=redis://...`, in Redis shared by every web process.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from limits import RateLimitItemPerMinute
from limits.storage import storage_from_string
from limits.strategies import FixedWindowRateLimiter

from backend.errors import RateLimited
from backend.logs import get_logger

log = get_logger("api-rate-limit")


@dataclass(frozen=True)
class Bucket:
    name: str
    per_minute: int


AUTH_SENSITIVE = Bucket("auth-sensitive", 10)
ADMIN_CRITICAL = Bucket("admin-critical", 60)

_AUTH_SENSITIVE_PATHS = frozenset(
    {
        "/api/auth/sign-in",
        "/api/auth/sign-up",
        "/api/auth/password-reset",
        "/api/auth/password-reset/confirm",
        "/api/auth/email-verification/confirm",
        "/api/auth/magic-link",
    }
)
_ADMIN_CRITICAL_PATHS = frozenset({"/api/auth/assign-role", "/api/notifications/email-smoke"})


def bucket_for(path: str) -> Bucket | None:
    path = path.rstrip("/") or "/"
    if path in _AUTH_SENSITIVE_PATHS:
        return AUTH_SENSITIVE
    if path in _ADMIN_CRITICAL_PATHS or path == "/api/admin" or path.startswith("/api/admin/"):
        return ADMIN_CRITICAL
    return None


def _storage_uri(url: str) -> str:
    # limits names a Redis unix socket `redis+unix://`; our Redis URLs say `unix://`.
    return "redis+unix://" + url[len("unix://"):] if url.startswith("unix://") else url


class RateLimiter:
    def __init__(self, storage_url: str = "memory://") -> None:
        self._limiter = FixedWindowRateLimiter(storage_from_string(_storage_uri(storage_url)))
        self._items = {b.name: RateLimitItemPerMinute(b.per_minute) for b in (AUTH_SENSITIVE, ADMIN_CRITICAL)}

    def hit(self, bucket: Bucket, client: str, path: str) -> dict[str, str]:
        """Count one request; the headers to send, or RateLimited when the limit is exceeded."""
        item = self._items[bucket.name]
        allowed = self._limiter.hit(item, bucket.name, client)
        stats = self._limiter.get_window_stats(item, bucket.name, client)
        reset = max(1, math.ceil(stats.reset_time - time.time()))
        if not allowed:
            log.warning(
                "rate limit exceeded",
                extra={"fields": {"bucket": bucket.name, "ip": client, "path": path, "retryAfterSeconds": reset}},
            )
            raise RateLimited(f"too many requests; retry in {reset} s", retry_after_seconds=reset)
        return {
            "x-ratelimit-limit": str(bucket.per_minute),
            "x-ratelimit-remaining": str(stats.remaining),
            "x-ratelimit-reset": str(reset),
        }
