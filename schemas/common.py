"""Schemas shared by every area: the error envelope, the success envelope and list pages, list
queries, JSON booleans and UTC date-times."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from datetime import UTC

from marshmallow import EXCLUDE, Schema, ValidationError, fields, missing, validate

from backend import clock, legal_text


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


def _legal_text(value: str) -> None:
    reason = legal_text.problem(value)
    if reason is not None:
        raise ValidationError(reason)


class LegalText(fields.String):
    """Free text that reaches legal documents (a legal name, a street, a city, a signer's name):
    1 to `max_length` characters, no control character, no leading `=`, `+`, `-` or `@`
    (`backend.legal_text`); refused with 400 `VALIDATION_ERROR` naming the field."""

    def __init__(self, max_length: int, **kwargs) -> None:
        metadata = {"pattern": legal_text.PATTERN, **kwargs.pop("metadata", {})}
        super().__init__(validate=[validate.Length(min=1, max=max_length), _legal_text], metadata=metadata, **kwargs)


class QueryList(fields.List):
    """A list in a query string: `?status=a` (one value, which the framework gives as a string)
    and `?status=a&status=b` (repeated keys) both load as a list. Every list field of a query
    schema is one of these (a test walks them)."""

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str):
            value = [value]
        return super()._deserialize(value, attr, data, **kwargs)


class UtcDateTime(fields.AwareDateTime):
    """Read as ISO 8601 (no offset means UTC), written as ISO 8601 UTC with `Z` (API.md)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(default_timezone=UTC, **kwargs)

    def _serialize(self, value, attr, obj, **kwargs):
        return clock.iso(value)

    def _deserialize(self, value, attr, data, **kwargs):
        return super()._deserialize(value, attr, data, **kwargs).astimezone(UTC)


class NestedAt(fields.Nested):
    """A nested object read at `source` (a dotted path) instead of the field's name or attribute, so
    that several parts of one answer may read the same object (marshmallow refuses two fields
    with one `attribute`): `campaign = NestedAt(CampaignRefOut, source="order")`."""

    def __init__(self, nested, *, source: str, **kwargs) -> None:
        super().__init__(nested, **kwargs)
        self.source = source

    def get_value(self, obj, attr, accessor=None, default=missing):
        return super().get_value(obj, self.source, accessor, default)


class _Computed:
    """A typed answer field whose value is `compute(obj)`: a format, or the result of a rule that
    `backend` defines (the rule is never written here)."""

    def __init__(self, compute, **kwargs) -> None:
        super().__init__(**kwargs)
        self.compute = compute

    def get_value(self, obj, attr, accessor=None, default=missing):
        return self.compute(obj)


class ComputedString(_Computed, fields.String):
    pass


class ComputedInteger(_Computed, fields.Integer):
    pass


class ComputedBoolean(_Computed, fields.Boolean):
    pass


# Pages and offsets beyond these are refused (400) before any arithmetic reaches PostgreSQL's
# bigint (`OFFSET (page - 1) * pageSize`); no list here has a billion rows.
MAX_PAGE = 10_000_000
MAX_OFFSET = 1_000_000_000


class AnsweredDirectly(Schema):
    """An answer dumped often enough (the ad-space search: 25 ad spaces and their stores per
    request; the session, on every page a browser opens) that marshmallow's field-by-field dump
    was the largest cost of the request: `answer` builds the same dict in one pass, and `dump` of
    one object uses it. The fields document the answer (OpenAPI) and define the reference dump,
    `dump_field_by_field`, which tests hold equal to `answer` (tests/marketplace/test_catalog_search.py
    for models and search rows, tests/identity/test_session_answer.py for sessions)."""

    @staticmethod
    def answer(obj) -> dict:
        raise NotImplementedError

    def dump(self, obj, *, many: bool | None = None):
        if many or self.many or self.only or self.exclude:
            return super().dump(obj, many=many)
        return self.answer(obj)

    def dump_field_by_field(self, obj) -> dict:
        return super().dump(obj)


class PageQuery(Schema):
    """Query of server-paginated lists (API.md, Lists)."""

    page = fields.Integer(load_default=1, validate=validate.Range(min=1, max=MAX_PAGE))
    pageSize = fields.Integer(load_default=25, validate=validate.Range(min=1, max=100))
    search = fields.String(load_default=None)
    sortBy = fields.String(load_default=None)
    sortDir = fields.String(load_default="asc", validate=validate.OneOf(["asc", "desc"]))


def enum_of(values: Iterable) -> dict:
    """Field metadata documenting a closed list of values (a `StrEnum` or its members) as the
    OpenAPI `enum` of an answer field (an input field validates with `validate.OneOf` instead)."""
    return {"enum": [getattr(value, "value", value) for value in values]}


def open_values(description: str) -> dict:
    """Field metadata of a status that is deliberately not a closed list (another party's word,
    stored as answered): `x-open-values` tells the document's readers and tests it is on purpose."""
    return {"description": description, "x-open-values": True}


def sort_by(sorts: Iterable[str], default: str) -> fields.String:
    """The `sortBy` of a list sorted by the keys of its backend `SORTS` table: the document's enum
    and the validation are that one list (`default` when absent)."""
    return fields.String(load_default=None, validate=validate.OneOf(list(sorts)),
                         metadata={"description": f"default `{default}`"})


class ListQuery(PageQuery):
    """Page query tolerant of unknown parameters (cache busters)."""

    class Meta:
        unknown = EXCLUDE


def _base_name(schema: type[Schema]) -> str:
    return schema.__name__.removesuffix("Out").removesuffix("Data")


@functools.cache
def enveloped(data_schema: type[Schema], name: str | None = None) -> type[Schema]:
    """`{ok: true, data: <data_schema>}`, named `<Name>Envelope` in the OpenAPI document (`Name`
    without its `Out` or `Data` suffix). One class per data schema, however often it is asked for."""
    return type(
        name or f"{_base_name(data_schema)}Envelope",
        (Schema,),
        {"ok": fields.Boolean(required=True), "data": fields.Nested(data_schema, required=True),
         "__module__": data_schema.__module__},
    )


@functools.cache
def page_of(item_schema: type[Schema], name: str | None = None) -> type[Schema]:
    """The `{items, total, page, pageSize}` answer of a list of `item_schema` (API.md, Lists),
    dumped from a `backend.listing.Page`; named `<Item>Page` unless `name` is given."""
    return type(
        name or f"{_base_name(item_schema)}Page",
        (Schema,),
        {
            "items": fields.List(fields.Nested(item_schema), required=True),
            "total": fields.Integer(required=True),
            "page": fields.Integer(required=True),
            "pageSize": fields.Integer(attribute="page_size", required=True),
            "__module__": item_schema.__module__,
        },
    )
