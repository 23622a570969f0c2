"""The only module that knows HTTP statuses: stable error code -> status, and the error handlers."""

from __future__ import annotations

import logging

import falcon
import marshmallow
import peewee

from backend.context import current_request_id
from backend.errors import DomainError, RateLimited

STATUS_BY_CODE: dict[str, int] = {
    "VALIDATION_ERROR": 400,
    "UNAUTHENTICATED": 401,
    "AUTH_INVALID_CREDENTIALS": 401,
    "AUTH_SIGNATURE_WEBHOOK_INVALID": 401,
    "FORBIDDEN": 403,
    "NOT_FOUND": 404,
    "BILLING_PDF_NOT_READY": 404,
    "METHOD_NOT_ALLOWED": 405,
    "CONFLICT": 409,
    "BILLING_MANDATE_MISSING": 409,
    "TEMPLATE_LAST_ACTIVE_VERSION": 409,
    "PRINT_CONFIGURATION_UNAVAILABLE": 409,
    "EINVOICE_MISSING_PDF": 409,
    "EINVOICE_RECIPIENT_UNKNOWN": 409,
    "DOCUMENT_INTEGRITY_FAILED": 409,
    "WEBHOOK_DEPRECATED": 410,
    "PAYLOAD_TOO_LARGE": 413,
    "UNSUPPORTED_MEDIA_TYPE": 415,
    "IDEMPOTENCY_KEY_REUSED": 422,
    "INCIDENT_WINDOW_CLOSED": 422,
    "TEMPLATE_TOO_DEEP": 422,
    "RATE_LIMITED": 429,
    "INTERNAL_ERROR": 500,
    "EINVOICE_PROVIDER_FAILED": 502,
    "ESIGN_PROVIDER_FAILED": 502,
    "SERVICE_UNAVAILABLE": 503,
    "REGISTRY_UNAVAILABLE": 503,
}

# Falcon's own errors (routing, media parsing) answered with our codes.
_CODE_BY_FALCON_STATUS = {
    400: "VALIDATION_ERROR",
    401: "UNAUTHENTICATED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    503: "SERVICE_UNAVAILABLE",
}

log = logging.getLogger("api")


def error_body(code: str, message: str, details: dict | None = None) -> dict:
    error: dict[str, object] = {"code": code, "message": message, "requestId": current_request_id()}
    if details:
        error["details"] = details
    return {"ok": False, "error": error}


def _answer(resp: falcon.Response, code: str, message: str, details: dict | None = None) -> None:
    resp.status = STATUS_BY_CODE.get(code, 500)
    resp.content_type = falcon.MEDIA_JSON
    resp.media = error_body(code, message, details)


def handle_domain_error(req, resp, ex: DomainError, params) -> None:
    _answer(resp, ex.code, ex.message, ex.details or None)
    if isinstance(ex, RateLimited):
        resp.media["data"] = {"retryAfterSeconds": ex.retry_after_seconds}
    if getattr(ex, "retry_after_seconds", None) is not None:  # a 429, or a 503 that knows when to retry
        resp.set_header("Retry-After", str(ex.retry_after_seconds))


def handle_validation_error(req, resp, ex: marshmallow.ValidationError, params) -> None:
    messages = ex.messages if isinstance(ex.messages, dict) else {"_schema": ex.messages}
    _answer(resp, "VALIDATION_ERROR", "the request is invalid", {"fields": messages})


def handle_http_error(req, resp, ex: falcon.HTTPError, params) -> None:
    status = ex.status_code
    code = _CODE_BY_FALCON_STATUS.get(status, "INTERNAL_ERROR" if status >= 500 else "VALIDATION_ERROR")
    message = ex.title or "error"
    if ex.description:
        message = f"{message}: {ex.description}"
    _answer(resp, code, message)
    resp.status = status
    for name, value in (ex.headers or {}).items():
        resp.set_header(name, value)


def handle_data_error(req, resp, ex: peewee.DataError, params) -> None:
    """A value PostgreSQL cannot take (a number past its column's range, text it cannot hold)
    came from the request: the caller's input, not a fault of the server."""
    log.info("value refused by the database", extra={"fields": {"method": req.method, "error": str(ex)[:200]}})
    _answer(resp, "VALIDATION_ERROR", "a value of the request is out of range or not storable")


def handle_database_lost(req, resp, ex: peewee.OperationalError | peewee.InterfaceError, params) -> None:
    """PostgreSQL went away during the request (stopped, restarted, network): 503, like a
    connection refused at the start of the request; the connection is dropped from the pool."""
    log.warning("database unavailable during the request",
                extra={"fields": {"method": req.method, "route": req.uri_template, "error": str(ex)[:200]}})
    _answer(resp, "SERVICE_UNAVAILABLE", "the database is unreachable")


def handle_uncaught(req, resp, ex: Exception, params) -> None:
    log.error(
        "uncaught exception",
        exc_info=ex,
        extra={"fields": {"method": req.method, "route": req.uri_template}},  # never the path: it may hold a token
    )
    _answer(resp, "INTERNAL_ERROR", "an internal error occurred")


def register(app: falcon.App) -> None:
    # Falcon picks the most specific handler for an exception's class.
    app.add_error_handler(Exception, handle_uncaught)
    app.add_error_handler(falcon.HTTPError, handle_http_error)
    app.add_error_handler(marshmallow.ValidationError, handle_validation_error)
    app.add_error_handler(DomainError, handle_domain_error)
    app.add_error_handler(peewee.DataError, handle_data_error)
    app.add_error_handler((peewee.OperationalError, peewee.InterfaceError), handle_database_lost)
