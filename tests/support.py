"""Helpers shared by tests (not fixtures): small resources to exercise the HTTP plumbing."""

from __future__ import annotations

from contextlib import contextmanager

from marshmallow import Schema, fields, validate

from api.requests import load
from api.responses import send


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


@contextmanager
def sql_statements():
    """The SQL statements run inside the block (for "one query per page" promises)."""
    from backend.db import database

    seen: list[str] = []
    original = database.obj.execute_sql

    def counting(sql, params=None, *args, **kwargs):
        seen.append(sql)
        return original(sql, params, *args, **kwargs)

    database.obj.execute_sql = counting
    try:
        yield seen
    finally:
        del database.obj.execute_sql
