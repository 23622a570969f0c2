"""Reading a request: the JSON body with its size limit, a declared schema's load, multipart files,
and the acting organization of the caller. Every area's responders use these, none defines its own."""

from __future__ import annotations

import sys

import falcon
from falcon.stream import BoundedStream
from marshmallow import Schema

from backend import json_input
from backend.errors import Forbidden, PayloadTooLarge, UnsupportedMediaType, ValidationError

JSON_BODY_LIMIT = 1024 * 1024
# Multipart framing (boundaries, part headers) around an uploaded file: the storage enforces the
# exact file limit, this margin only keeps BodyLimit from refusing a file right at the limit.
MULTIPART_ALLOWANCE = 64 * 1024
TEXT_PART_MAX_BYTES = 1024


class Request(falcon.Request):
    """Falcon's request, reading chunked bodies too.

    Falcon bounds `bounded_stream` by Content-Length and reads nothing when there is none, so a
    chunked body (no Content-Length) would look empty: a JSON body "missing", a signed webhook
    failing its signature. When the server says the input ends by itself (gunicorn sets
    `wsgi.input_terminated` and decodes the chunks), the stream is read to its end; every
    reader still bounds what it reads (JSON 1 MiB, webhooks, uploads by their own limits)."""

    @property
    def bounded_stream(self):
        if self.content_length is None and self.env.get("wsgi.input_terminated"):
            if self.__dict__.get("_terminated_stream") is None:
                self.__dict__["_terminated_stream"] = BoundedStream(self.env["wsgi.input"], sys.maxsize)
            return self.__dict__["_terminated_stream"]
        return super().bounded_stream


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
    # A browser form (or `fetch` without preflight) can only send text/plain, form or multipart
    # bodies cross-site: JSON is read only when it says it is JSON (415 otherwise).
    if (req.content_type or "").split(";", 1)[0].strip().lower() != "application/json":
        raise UnsupportedMediaType("send the body as Content-Type: application/json")
    return json_input.loads(raw)


def load(req: falcon.Request, schema: Schema) -> dict:
    """The body validated by `schema` (marshmallow errors become VALIDATION_ERROR with fields)."""
    body = read_json(req)
    if body is None and not req.context.raw_json_body.strip():
        body = {}  # no body at all: the schema's defaults (a JSON `null` is not an object)
    if not isinstance(body, dict):
        raise ValidationError("the body must be a JSON object")
    return schema.load(body)


def is_json(req: falcon.Request) -> bool:
    return (req.content_type or "").lower().startswith("application/json")


def multipart_file(req: falcon.Request, text_fields: tuple[str, ...] = ()) -> tuple[dict[str, str], object]:
    """The text parts named in `text_fields` that come before the `file` part, and the `file`
    part itself, its stream not read yet (the file is streamed to storage, so the fields that
    decide where it goes must precede it). Other parts are ignored."""
    if not (req.content_type or "").lower().startswith(falcon.MEDIA_MULTIPART):
        raise falcon.HTTPUnsupportedMediaType(description="send multipart/form-data with a `file` part")
    texts: dict[str, str] = {}
    for part in req.get_media():
        if part.name == "file":
            return texts, part
        if part.name in text_fields:
            text = part.stream.read(TEXT_PART_MAX_BYTES).decode("utf-8", "replace").strip()
            if "\x00" in text:
                raise ValidationError("a form field contains a NUL character", fields={part.name: ["NUL character"]})
            texts[part.name] = text
    raise ValidationError("the file is missing (send it after the other fields)", fields={"file": ["required"]})


def acting_organization(req: falcon.Request, *actor_types: str) -> str:
    """The caller's active organization, which must be of one of `actor_types` (`industrial`,
    `distributor`, `printer`): every business query is scoped to it. 403 otherwise, with
    `details.reason = "<types>_organization_required"`."""
    organization_id = req.context.principal.active_organization_id or ""
    if organization_id.partition(":")[0] not in actor_types:
        raise Forbidden(f"an active {' or '.join(actor_types)} organization is required",
                        reason=f"{'_or_'.join(actor_types)}_organization_required")
    return organization_id
