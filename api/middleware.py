"""Middleware, in the order `create_app` installs it: canonical path, request id, telemetry, rate
limit, body size, database connection."""

from __future__ import annotations

import logging
import time

import falcon

from api.clientip import client_ip
from api.ratelimit import RateLimiter, account_bucket_for, account_key, bucket_for, client_key
from api.requests import JSON_BODY_LIMIT
from api.telemetry import Telemetry
from backend import db
from backend.context import accept_request_id, bind_request_id, reset_request_id
from backend.errors import PayloadTooLarge, ValidationError
from backend.logs import get_logger

access_log = get_logger("api.request")
# Liveness probes hit it every few seconds: their lines would drown the others (counted on /api/health).
QUIET_PATH = "/api/health"


def canonical_path(path: str) -> str:
    """`path` without empty and `.` segments, `..` resolved (never above the root): the path the
    router, the rate limits and the access rules all see."""
    if "//" not in path and "/." not in path:
        return path
    segments: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if segments:
                segments.pop()
            continue
        segments.append(segment)
    return "/" + "/".join(segments)


class CanonicalPath:
    """Normalize repeated slashes and dot segments before routing: `//api/auth/sign-in` and
    `/api/./auth/sign-in` are `/api/auth/sign-in` for every later step."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.path = canonical_path(req.path)


def logged_route(req: falcon.Request) -> str | None:
    """What logs name a request by: the matched route template (`/api/invitations/{token}/accept`),
    never the raw path, whose parameters may be tokens; None when no route matched."""
    return req.uri_template or None


class RequestId:
    """Accept the client's `x-request-id` when valid (else a UUID4), echo it on every answer, and
    write one access line per request (`api.request`: method, route template, status, duration)
    so a request id leads to its outcome."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.request_started = time.perf_counter()
        # The WSGI variable itself: `get_header` builds it from the name and, for a header the
        # client did not send (the usual case), catches a KeyError on every request.
        req.context.request_id = accept_request_id(req.env.get("HTTP_X_REQUEST_ID"))
        req.context.request_id_token = bind_request_id(req.context.request_id)

    def process_response(self, req, resp, resource, req_succeeded) -> None:
        request_id = getattr(req.context, "request_id", None)
        if request_id:
            resp.set_header("x-request-id", request_id)
        started = getattr(req.context, "request_started", None)
        if started is not None and req.path != QUIET_PATH and access_log.isEnabledFor(logging.INFO):
            access_log.info("request", extra={"fields": {
                "method": req.method, "route": logged_route(req), "status": resp.status_code,
                "durationMs": round((time.perf_counter() - started) * 1000, 2)}})
        token = getattr(req.context, "request_id_token", None)
        if token is not None:
            reset_request_id(token)
            req.context.request_id_token = None


class RefuseNul:
    """A NUL character (`%00`) in the path or the query string is refused (400) before routing:
    PostgreSQL text cannot hold it, and no identifier or filter of this API contains one."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if "\x00" in req.path or "%00" in req.query_string:
            raise ValidationError("the path or query string contains a NUL character (%00)")


class CountRequests:
    def __init__(self, telemetry: Telemetry) -> None:
        self.telemetry = telemetry

    def process_request(self, req, resp) -> None:
        if req.path.startswith("/api"):
            self.telemetry.count_request()

    def process_response(self, req, resp, resource, req_succeeded) -> None:
        if not req.path.startswith("/api"):
            return
        if resp.status_code >= 500:
            self.telemetry.count_error()
        started = getattr(req.context, "request_started", None)
        self.telemetry.metrics.observe(route=req.uri_template or "unmatched", method=req.method,
                                       status=resp.status_code,
                                       seconds=time.perf_counter() - started if started else 0.0)


class RateLimit:
    """Headers only on answers within the limit; the 429 itself comes from the error handler."""

    def __init__(self, limiter: RateLimiter, trusted_proxy_count: int) -> None:
        self.limiter = limiter
        self.trusted_proxy_count = trusted_proxy_count

    def process_request(self, req, resp) -> None:
        req.context.client_ip = client_ip(req, self.trusted_proxy_count)

    def process_resource(self, req, resp, resource, params) -> None:
        # After routing: the bucket comes from the matched route, whatever the raw path looked like.
        bucket = bucket_for(req.uri_template, req.get_param("reconcile"))
        if bucket is None:
            return
        req.context.rate_limit_headers = self.limiter.hit(bucket, client_key(req.context.client_ip),
                                                          req.uri_template)

    def process_response(self, req, resp, resource, req_succeeded) -> None:
        headers = getattr(req.context, "rate_limit_headers", None)
        if headers and resp.status_code != 429:
            resp.set_headers(headers)


class AccountRateLimit:
    """After the policy, which knows the caller: the routes whose budget is also counted per
    account (`account_bucket_for`) count this request against the signed-in user."""

    def __init__(self, limiter: RateLimiter) -> None:
        self.limiter = limiter

    def process_resource(self, req, resp, resource, params) -> None:
        bucket = account_bucket_for(req.uri_template)
        principal = getattr(req.context, "principal", None)
        if bucket is None or principal is None:
            return
        self.limiter.hit(bucket, account_key(principal.user_id), req.uri_template)


class BodyLimit:
    """Refuse a declared body over the route's limit before anything reads it (JSON: 1 MiB)."""

    def process_resource(self, req, resp, resource, params) -> None:
        limit = getattr(resource, "max_body_bytes", JSON_BODY_LIMIT)
        if req.content_length and req.content_length > limit:
            raise PayloadTooLarge(f"the body exceeds {limit} bytes", limitBytes=limit)


class DatabaseSession:
    """One pooled connection per request, opened when a resource needs it and always given back."""

    def process_resource(self, req, resp, resource, params) -> None:
        if resource is not None and getattr(resource, "uses_database", True):
            req.context.opened_db = db.open_connection()

    def process_response(self, req, resp, resource, req_succeeded) -> None:
        if getattr(req.context, "opened_db", False):
            db.close_connection()
