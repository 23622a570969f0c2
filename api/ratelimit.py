"""Rate limits of Specification A: fixed one-minute windows per client IP and bucket.

The bucket is chosen from the matched route's template (never from the raw path, which may
carry `//` or `/./` that the router would still match), with the query for `?reconcile=true`:

- `auth-sensitive` (10/min): sign-in, sign-up, password reset, e-mail verification and the magic
  link request;
- `admin-critical` (60/min): `/api/admin/**`, `/api/auth/assign-role`, `/api/notifications/email-smoke`;
- `provider-reconcile` (10/min): `GET /api/organizations/{id}/onboarding?reconcile=true`, which
  calls the e-signature provider synchronously;
- `deprecated-webhook` (30/min): `POST /api/webhooks/odp`, answered 410, so that a flood of it is
  refused before it is logged;
- `money` (30/min): the money routes outside `/api/admin`: an invoice's refund and credit note,
  the self-billing catch-up of a reservation (`supplier-self-billing`);
- `change-password` (5/min): `POST /api/auth/change-password`, counted per address and, once the
  session is known, per account too (`account_bucket_for`, the `AccountRateLimit` middleware), so
  neither many addresses nor many accounts multiply the guesses of a current password.

The client is its IP address; an IPv6 client is its /64 network (what one subscriber gets), so
rotating addresses inside it does not multiply the budget. The warning of a refusal is written
once per client, bucket and window (the first refusal), so a flood of 429 cannot fill the logs.

Counters live in Redis (`RATE_LIMIT_STORAGE_URL`, default `REDIS_URL`), shared by every web
process; `vitrine dev` (one web process) keeps them in memory (`memory://`). When they cannot be
read (Redis down), a limited route fails closed: 503 `SERVICE_UNAVAILABLE` with `Retry-After`,
since answering without counting would open sign-in to unlimited password guessing.
"""

from __future__ import annotations

import ipaddress
import math
import time
from dataclasses import dataclass

import redis
from limits import RateLimitItemPerMinute
from limits.storage import storage_from_string
from limits.strategies import FixedWindowRateLimiter

from backend.errors import RateLimited, ServiceUnavailable
from backend.logs import get_logger

log = get_logger("api-rate-limit")


# How long a client refused for unreachable counters waits before trying again.
COUNTERS_RETRY_AFTER_SECONDS = 5


class CountersUnreachable(ServiceUnavailable):
    """The rate-limit counters cannot be read: the request is refused, not let through uncounted."""

    def __init__(self) -> None:
        super().__init__("the rate-limit counters are unreachable; retry shortly")
        self.retry_after_seconds = COUNTERS_RETRY_AFTER_SECONDS


@dataclass(frozen=True)
class Bucket:
    name: str
    per_minute: int


AUTH_SENSITIVE = Bucket("auth-sensitive", 10)
ADMIN_CRITICAL = Bucket("admin-critical", 60)
PROVIDER_RECONCILE = Bucket("provider-reconcile", 10)
DEPRECATED_WEBHOOK = Bucket("deprecated-webhook", 30)
MONEY = Bucket("money", 30)
CHANGE_PASSWORD = Bucket("change-password", 5)
BUCKETS = (AUTH_SENSITIVE, ADMIN_CRITICAL, PROVIDER_RECONCILE, DEPRECATED_WEBHOOK, MONEY, CHANGE_PASSWORD)

_AUTH_SENSITIVE_ROUTES = frozenset(
    {
        "/api/auth/sign-in",
        "/api/auth/sign-up",
        "/api/auth/password-reset",
        "/api/auth/password-reset/confirm",
        "/api/auth/email-verification",
        "/api/auth/email-verification/confirm",
        "/api/auth/magic-link",
    }
)
_ADMIN_CRITICAL_ROUTES = frozenset({"/api/auth/assign-role", "/api/notifications/email-smoke"})
_MONEY_ROUTES = frozenset(
    {
        "/api/billing/invoices/{invoice_id}/refund",
        "/api/billing/invoices/{invoice_id}/credit-note",
        "/api/billing/reservations/{reservation_id}/supplier-self-billing",
    }
)
_CHANGE_PASSWORD_ROUTE = "/api/auth/change-password"  # noqa: S105 (a route, not a password)
_RECONCILE_ROUTE = "/api/organizations/{organization_id}/onboarding"
_DEPRECATED_WEBHOOK_ROUTE = "/api/webhooks/odp"
_TRUE = frozenset({"true", "1", "yes", "on"})


def bucket_for(route: str | None, reconcile: str | None = None) -> Bucket | None:
    """The bucket of a matched route template (None: not limited); `reconcile` is the value of
    the `reconcile` query parameter."""
    if route is None:
        return None
    if route in _AUTH_SENSITIVE_ROUTES:
        return AUTH_SENSITIVE
    if route in _ADMIN_CRITICAL_ROUTES or route == "/api/admin" or route.startswith("/api/admin/"):
        return ADMIN_CRITICAL
    if route == _RECONCILE_ROUTE and (reconcile or "").strip().lower() in _TRUE:
        return PROVIDER_RECONCILE
    if route == _DEPRECATED_WEBHOOK_ROUTE:
        return DEPRECATED_WEBHOOK
    if route in _MONEY_ROUTES:
        return MONEY
    if route == _CHANGE_PASSWORD_ROUTE:
        return CHANGE_PASSWORD
    return None


def account_bucket_for(route: str | None) -> Bucket | None:
    """The bucket a matched route also counts per signed-in account (None: per address only)."""
    return CHANGE_PASSWORD if route == _CHANGE_PASSWORD_ROUTE else None


def account_key(user_id: str) -> str:
    """Who an account budget belongs to (never an address: the two never share a counter)."""
    return f"account:{user_id}"


def client_key(ip: str) -> str:
    """Who a budget belongs to: the IPv4 address, or the /64 network of an IPv6 one (an IPv4-mapped
    IPv6 address is its IPv4 address)."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return ip
    if address.version == 6:
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


def _storage_uri(url: str) -> str:
    # limits names a Redis unix socket `redis+unix://`; our Redis URLs say `unix://`.
    return "redis+unix://" + url[len("unix://"):] if url.startswith("unix://") else url


class RateLimiter:
    def __init__(self, storage_url: str = "memory://") -> None:
        self._limiter = FixedWindowRateLimiter(storage_from_string(_storage_uri(storage_url)))
        self._items = {b.name: RateLimitItemPerMinute(b.per_minute) for b in BUCKETS}

    def hit(self, bucket: Bucket, client: str, route: str) -> dict[str, str]:
        """Count one request; the headers to send, or RateLimited when the limit is exceeded."""
        item = self._items[bucket.name]
        try:
            allowed = self._limiter.hit(item, bucket.name, client)
            stats = self._limiter.get_window_stats(item, bucket.name, client)
            first_refusal = not allowed and self._first_refusal(item, bucket, client)
        except (redis.RedisError, OSError) as exc:
            log.warning("rate-limit counters unreachable: request refused", extra={"fields": {
                "bucket": bucket.name, "route": route, "error": f"{type(exc).__name__}: {exc}"[:200]}})
            raise CountersUnreachable from exc
        reset = max(1, math.ceil(stats.reset_time - time.time()))
        if not allowed:
            if first_refusal:
                log.warning("rate limit exceeded", extra={"fields": {
                    "bucket": bucket.name, "ip": client, "route": route, "retryAfterSeconds": reset}})
            raise RateLimited(f"too many requests; retry in {reset} s", retry_after_seconds=reset)
        return {
            "x-ratelimit-limit": str(bucket.per_minute),
            "x-ratelimit-remaining": str(stats.remaining),
            "x-ratelimit-reset": str(reset),
        }

    def _first_refusal(self, item, bucket: Bucket, client: str) -> bool:
        """Whether this refusal is the window's first (its counter is one past the limit)."""
        return self._limiter.storage.get(item.key_for(bucket.name, client)) == item.amount + 1
