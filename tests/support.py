"""Helpers shared by tests (not fixtures): small resources to exercise the HTTP plumbing."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from api.responses import load, send


class EchoIn(Schema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=20))
    count = fields.Integer(load_default=1)


class Echo:
    """POST echoes a validated body; GET fails on purpose."""

    def on_post(self, req, resp) -> None:
        send(resp, load(req, EchoIn()), status=201)

    def on_get(self, req, resp) -> None:
        raise RuntimeError("boom: an unexpected failure")


def json_line_fields(line: dict) -> set[str]:
    return set(line)
