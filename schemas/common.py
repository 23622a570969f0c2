"""Schemas shared by every route: the error envelope and list pages."""

from __future__ import annotations

from marshmallow import Schema, fields, validate


class ErrorDetail(Schema):
    code = fields.String(required=True, metadata={"description": "stable error code"})
    message = fields.String(required=True)
    requestId = fields.String(allow_none=True)
    details = fields.Dict(metadata={"description": "e.g. {fields: {name: [message]}}"})


class ErrorOut(Schema):
    ok = fields.Boolean(required=True, metadata={"example": False})
    error = fields.Nested(ErrorDetail, required=True)
    data = fields.Dict(metadata={"description": "on 429: {retryAfterSeconds}"})


class JsonBoolean(fields.Boolean):
    """A boolean of a JSON body: `true` or `false` only (marshmallow's Boolean also takes "yes", 1,
    "on"..., which a client sending the wrong type would never notice)."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


class QueryList(fields.List):
    """A list in a query string: `?status=a` (one value, which the framework gives as a string)
    and `?status=a&status=b` (repeated keys) both load as a list. Every list field of a query
    schema is one of these (a test walks them)."""

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str):
            value = [value]
        return super()._deserialize(value, attr, data, **kwargs)


class PageQuery(Schema):
    """Query of server-paginated lists (API.md, Lists)."""

    page = fields.Integer(load_default=1, validate=validate.Range(min=1))
    pageSize = fields.Integer(load_default=25, validate=validate.Range(min=1, max=100))
    search = fields.String(load_default=None)
    sortBy = fields.String(load_default=None)
    sortDir = fields.String(load_default="asc", validate=validate.OneOf(["asc", "desc"]))
