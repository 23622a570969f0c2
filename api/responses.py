"""Success envelope `{"ok": true, "data": ...}` and request-body loading with its size limit."""

from __future__ import annotations

import json

import falcon
from marshmallow import Schema

from backend.errors import PayloadTooLarge, ValidationError

JSON_BODY_LIMIT = 1024 * 1024


def send(resp: falcon.Response, data: object, status: int = 200) -> None:
    resp.status = status
    resp.media = {"ok": True, "data": data}


def read_json(req: falcon.Request, limit: int = JSON_BODY_LIMIT) -> object:
    """The parsed JSON body (None when empty), refusing more than `limit` bytes before parsing.
    The raw body is kept on the request, so a responder run again (`api.conflicts`) reads it again."""
    if req.content_length and req.content_length > limit:
        raise PayloadTooLarge(f"the body exceeds {limit} bytes")
    raw = getattr(req.context, "raw_json_body", None)
    if raw is None:
        raw = req.context.raw_json_body = req.bounded_stream.read(limit + 1)
    if len(raw) > limit:
        raise PayloadTooLarge(f"the body exceeds {limit} bytes")
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValidationError("the body is not valid JSON", reason=str(exc)) from None


def load(req: falcon.Request, schema: Schema) -> dict:
    """The body validated by `schema` (marshmallow errors become VALIDATION_ERROR with fields)."""
    body = read_json(req)
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise ValidationError("the body must be a JSON object")
    return schema.load(body)
