"""Operation declarations: each responder states its body, query and answer schemas once.

    @operation("Create a store", body=StoreIn, answer=StoreAnswer, status=201, tags=("catalog",))
    def on_post(self, req, resp, body):
        return {"store": catalog.create_store(...)}

From the declaration the wrapper loads and validates the JSON body (`body=`) and the query string
(`query=`), passes them to the responder as the `body` and `query` arguments, and dumps what the
responder returns with the `answer` schema into the `{ok, data}` envelope with `status`. The
OpenAPI operation of `api.openapi` is generated from the same declaration (path parameters from
the route template, the request body marked required, the enveloped answer), so what is
documented is what is validated and sent. Only `summary` and `description` are prose.

A responder that answers something other than JSON (a PDF, a ZIP, a CSV, a redirect) declares
`produces=` with the media type and writes `resp` itself; one whose body is a multipart upload
declares its form with `upload=` (documented; the responder streams the parts itself). When a
responder declares both `body` and `upload`, the JSON body is loaded only for a JSON request and
`body` is None for a multipart one. `raw_body=True` documents `body` but leaves the bytes to the
responder (a signed webhook verifies the signature over the raw body before parsing it);
`body_required=False` when an empty body is valid. `consumes=` names the media type of a raw body
that is not JSON (an XML document), documented as such and read by the responder itself. `path=`
validates and converts the URI
template's fields (e.g. a version number), which the responder then receives converted.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from marshmallow import Schema

from api.requests import is_json, load
from api.responses import send


class Answer(NamedTuple):
    """Returned by a responder whose success status depends on the outcome (201 or 200, 200 or
    202): the status must be the declared one or one of `other_answers`."""

    data: object
    status: int


@dataclass(frozen=True)
class Operation:
    summary: str
    description: str | None = None
    tags: tuple[str, ...] = ()
    body: type[Schema] | None = None
    body_required: bool = True
    raw_body: bool = False
    consumes: tuple[str, ...] = ()
    upload: type[Schema] | None = None
    query: type[Schema] | None = None
    path: type[Schema] | None = None
    answer: type[Schema] | None = None
    status: int = 200
    other_answers: tuple[tuple[int, type[Schema], str], ...] = ()
    produces: tuple[str, ...] = ()
    answer_description: str = "ok"
    errors: tuple[tuple[int, str], ...] = ()
    path_enums: tuple[tuple[str, tuple[str, ...]], ...] = ()
    headers: tuple[tuple[str, Mapping[str, Any]], ...] = ()

    @functools.cached_property
    def body_schema(self) -> Schema | None:
        return self.body() if self.body else None

    @functools.cached_property
    def query_schema(self) -> Schema | None:
        return self.query() if self.query else None

    @functools.cached_property
    def path_schema(self) -> Schema | None:
        return self.path() if self.path else None

    def path_parameters(self, params: dict) -> dict:
        """The URI template's fields, validated and converted by `path` when declared."""
        return self.path_schema.load(params) if self.path_schema is not None else params

    @functools.cached_property
    def answer_schemas(self) -> dict[int, Schema]:
        schemas = {status: schema() for status, schema, _ in self.other_answers}
        if self.answer is not None:
            schemas[self.status] = self.answer()
        return schemas

    def read(self, req) -> dict[str, Any]:
        """The declared inputs of the request, validated: `{"body": ..., "query": ...}`."""
        inputs: dict[str, Any] = {}
        if self.body is not None and not self.raw_body:
            inputs["body"] = load(req, self.body_schema) if self.upload is None or is_json(req) else None
        if self.query is not None:
            inputs["query"] = self.query_schema.load(req.params)
        return inputs

    def answer_with(self, resp, result: object) -> None:
        if self.answer is None:
            return  # a raw answer (`produces`): the responder wrote `resp`
        data, status = result if isinstance(result, Answer) else (result, self.status)
        send(resp, self.answer_schemas[status].dump(data), status=status)


# The `Idempotency-Key` header of the routes that replay a stored answer (API.md): what
# `backend.billing.idempotency.check_key` accepts, 255 printable characters at most.
IDEMPOTENCY_KEY = {"Idempotency-Key": {
    "description": "required; a replay with the same key and body answers the stored answer (24 h)",
    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]([ -~]*[!-~])?$"}}}


def operation(
    summary: str,
    *,
    description: str | None = None,
    tags: tuple[str, ...] | list[str] = (),
    body: type[Schema] | None = None,
    body_required: bool = True,
    raw_body: bool = False,
    consumes: tuple[str, ...] = (),
    upload: type[Schema] | None = None,
    query: type[Schema] | None = None,
    path: type[Schema] | None = None,
    answer: type[Schema] | None = None,
    status: int = 200,
    other_answers: Mapping[int, type[Schema] | tuple[type[Schema], str]] | None = None,
    produces: tuple[str, ...] | str = (),
    answer_description: str = "ok",
    errors: Mapping[int, str] | None = None,
    path_enums: Mapping[str, Iterable[str]] | None = None,
    headers: Mapping[str, Mapping[str, Any]] | None = None,
) -> Callable[[Callable], Callable]:
    """Declare a responder's operation (see the module docstring). `other_answers`: the other
    success statuses the responder may return with `Answer`, each with its schema (and, in a
    tuple, its description). `errors`: the error statuses worth naming, with what they mean (every
    error has the `ErrorOut` envelope; the others are the document's `default`). `path_enums`: the
    values a path parameter may take, when they are a closed list. `headers`: the request headers
    the responder requires, each with its OpenAPI parameter (`description`, `schema`), e.g.
    `IDEMPOTENCY_KEY`; the responder reads and checks them itself."""
    others = tuple(
        (code, *(schema if isinstance(schema, tuple) else (schema, answer_description)))
        for code, schema in (other_answers or {}).items()
    )
    declared = Operation(
        summary=summary, description=description, tags=tuple(tags), body=body, body_required=body_required,
        raw_body=raw_body, consumes=tuple(consumes), upload=upload, query=query, path=path,
        answer=answer, status=status, other_answers=others,
        produces=(produces,) if isinstance(produces, str) else tuple(produces),
        answer_description=answer_description, errors=tuple((errors or {}).items()),
        path_enums=tuple((name, tuple(values)) for name, values in (path_enums or {}).items()),
        headers=tuple((headers or {}).items()),
    )
    if declared.answer is None and not declared.produces:
        raise TypeError(f"{summary!r}: declare the answer schema, or `produces` for a raw answer")

    def decorate(responder: Callable) -> Callable:
        @functools.wraps(responder)
        def respond(resource, req, resp, **params):
            params = declared.path_parameters(params)
            declared.answer_with(resp, responder(resource, req, resp, **params, **declared.read(req)))

        respond.operation = declared
        return respond

    return decorate
