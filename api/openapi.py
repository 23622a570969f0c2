"""`/api/openapi.json` generated from the route table and each responder's declaration
(`api.operations.operation`); `/api/docs` serves Swagger UI from the swagger-ui-bundle package,
so the page works without internet access."""

from __future__ import annotations

import re

import falcon
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin

from api.access import PUBLIC, Route
from api.operations import Operation, operation
from schemas.common import ErrorOut, enveloped
from schemas.printing.batches import BatchDeliveryIn

METHODS = ("get", "post", "put", "patch", "delete")
PATH_PARAMETER = re.compile(r"{(\w+)}")
BINARY = {"type": "string", "format": "binary"}
TEXT = {"type": "string"}

API_DESCRIPTION = """Vitrine back end. Every JSON answer is an envelope: `{"ok": true, "data": ...}` or
`{"ok": false, "error": {"code", "message", "requestId", "details"}}`. Every answer carries
`x-request-id`. Dates are ISO 8601 UTC with `Z`, amounts integer cents, rates basis points."""

ERROR_ANSWER = {"description": "error envelope", "content": {"application/json": {"schema": ErrorOut}}}


def _path_parameters(path: str, enums: dict[str, tuple[str, ...]] | None = None) -> list[dict]:
    enums = enums or {}
    return [{"in": "path", "name": name, "required": True,
             "schema": {"type": "string", **({"enum": list(enums[name])} if name in enums else {})}}
            for name in PATH_PARAMETER.findall(path)]


def _raw_schema(media_type: str) -> dict:
    return TEXT if media_type.startswith("text/") else BINARY


def declared_operation(declared: Operation, path: str, plugin: MarshmallowPlugin) -> dict:
    """The OpenAPI operation of a declared responder (a multipart form is written inline, the
    way form editors read it)."""
    operation: dict = {"summary": declared.summary}
    if declared.description:
        operation["description"] = declared.description
    if declared.tags:
        operation["tags"] = list(declared.tags)
    if declared.path is not None:
        parameters = [{"in": "path", "schema": declared.path}]
    else:
        parameters = _path_parameters(path, dict(declared.path_enums))
    if declared.query is not None:
        parameters.append({"in": "query", "schema": declared.query})
    parameters.extend({"in": "header", "name": name, "required": True, **dict(parameter)}
                      for name, parameter in declared.headers)
    if parameters:
        operation["parameters"] = parameters
    content = {}
    if declared.body is not None:
        content["application/json"] = {"schema": declared.body}
    for media_type in declared.consumes:
        content[media_type] = {"schema": {"type": "string"}}
    if declared.upload is not None:
        form = plugin.converter.schema2jsonschema(declared.upload)
        form.pop("additionalProperties", None)  # the responder streams its parts and skips the others
        content["multipart/form-data"] = {"schema": form}
    if content:
        operation["requestBody"] = {"required": declared.body_required, "content": content}
    answers = {}
    if declared.answer is not None:
        answers["application/json"] = {"schema": enveloped(declared.answer)}
    for media_type in declared.produces:
        answers[media_type] = {"schema": _raw_schema(media_type)}
    operation["responses"] = {str(declared.status): {"description": declared.answer_description, "content": answers}}
    for status, schema, description in declared.other_answers:
        operation["responses"][str(status)] = {
            "description": description, "content": {"application/json": {"schema": enveloped(schema)}}}
    for status, description in declared.errors:
        operation["responses"][str(status)] = {**ERROR_ANSWER, "description": description}
    return operation


def responders(route: Route):
    """(method, responder) of every method the route's resource answers."""
    for method in METHODS:
        name = f"on_{method}" + (f"_{route.suffix}" if route.suffix else "")
        responder = getattr(route.resource, name, None)
        if responder is not None:
            yield method, responder


def build_openapi(routes: list[Route]) -> dict:
    plugin = MarshmallowPlugin()
    spec = APISpec(
        title="Vitrine API",
        version="1",
        openapi_version="3.0.3",
        plugins=[plugin],
        info={"description": API_DESCRIPTION},
    )
    for schema in CONSTRAINED_SCHEMAS:  # registered first: every reference gets the constraints
        spec.components.schema(schema.__name__, schema.OPENAPI_CONSTRAINTS, schema=schema)
    for route in routes:
        operations = {}
        for method, responder in responders(route):
            declared = getattr(responder, "operation", None)
            if declared is None:
                raise TypeError(f"{method.upper()} {route.path}: declare its operation (api.operations.operation)")
            operation = declared_operation(declared, route.path, plugin)
            operation["responses"]["default"] = ERROR_ANSWER
            operation["x-access"] = route.access_for(method).describe()
            operations[method] = operation
        spec.path(path=route.path, operations=operations)
    return _null_means_null(spec.to_dict())


# Schemas whose rules span fields (marshmallow's `validates_schema`) state them as JSON Schema in
# `OPENAPI_CONSTRAINTS`, so a request the document calls valid is one the API accepts.
CONSTRAINED_SCHEMAS = (BatchDeliveryIn,)


# apispec writes a nullable nested schema as `anyOf: [{$ref}, {type: object, nullable: true}]`,
# whose second branch admits any object: the branch is made to admit null only.
NULL_BRANCH = {"type": "object", "nullable": True}


def _null_means_null(node):
    if isinstance(node, dict):
        if node.get("anyOf"):
            node["anyOf"] = [{**NULL_BRANCH, "enum": [None]} if branch == NULL_BRANCH else branch
                             for branch in node["anyOf"]]
        for value in node.values():
            _null_means_null(value)
    elif isinstance(node, list):
        for value in node:
            _null_means_null(value)
    return node


class OpenApiDocument:
    uses_database = False

    def __init__(self, routes_provider) -> None:
        self._routes_provider = routes_provider
        self._document: dict | None = None

    @operation("The OpenAPI 3 document of this API (raw, not enveloped)", tags=("operations",),
               produces="application/json")
    def on_get(self, req, resp) -> None:
        if self._document is None:
            self._document = build_openapi(self._routes_provider())
        resp.media = self._document


DOCS_PAGE = """<!doctype html>
<html lang="fr"><head><meta charset="utf-8"><title>Vitrine API</title>
<link rel="stylesheet" href="/api/docs/static/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/api/docs/static/swagger-ui-bundle.js"></script>
<script src="/api/docs/static/swagger-ui-standalone-preset.js"></script>
<script src="/api/docs/init.js"></script>
</body></html>
"""

DOCS_SCRIPT = """window.ui = SwaggerUIBundle({url: "/api/openapi.json", dom_id: "#swagger-ui",
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: "StandaloneLayout",
  validatorUrl: null});
"""


def root_redirect(req, resp, **params) -> None:
    """`/` on the API's host leads to the API documentation (a sink: not an API operation)."""
    raise falcon.HTTPFound("/api/docs")


class DocsPage:
    uses_database = False

    @operation("Human-readable API documentation (Swagger UI, served locally)", tags=("operations",),
               produces="text/html")
    def on_get(self, req, resp) -> None:
        resp.content_type = "text/html; charset=utf-8"
        resp.text = DOCS_PAGE

    @operation("The documentation page's start-up script (kept out of the HTML so a strict CSP can apply)",
               tags=("operations",), produces="application/javascript")
    def on_get_script(self, req, resp) -> None:
        resp.content_type = "application/javascript"
        resp.text = DOCS_SCRIPT


def routes(deps) -> list[Route]:
    docs = DocsPage()
    return [
        Route("/api/openapi.json", OpenApiDocument(lambda: deps.routes), PUBLIC),
        Route("/api/docs", docs, PUBLIC),
        Route("/api/docs/init.js", docs, PUBLIC, suffix="script"),
    ]
