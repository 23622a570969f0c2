"""`/api/openapi.json` built from the route table and marshmallow schemas; `/api/docs` serves
Swagger UI from the swagger-ui-bundle package, so the page works without internet access."""

from __future__ import annotations

import importlib
import pkgutil

import falcon
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from apispec.yaml_utils import load_yaml_from_docstring

METHODS = ("get", "post", "put", "patch", "delete")

API_DESCRIPTION = """Vitrine back end. Every JSON answer is an envelope: `{"ok": true, "data": ...}` or
`{"ok": false, "error": {"code", "message", "requestId", "details"}}`. Every answer carries
`x-request-id`. Dates are ISO 8601 UTC with `Z`, amounts integer cents, rates basis points."""


def _register_all_schemas() -> None:
    """Import every module of `schemas` so docstrings may name any schema class."""
    import schemas

    for module in pkgutil.walk_packages(schemas.__path__, prefix="schemas."):
        importlib.import_module(module.name)


def build_openapi(routes) -> dict:
    _register_all_schemas()
    spec = APISpec(
        title="Vitrine API",
        version="1",
        openapi_version="3.0.3",
        plugins=[MarshmallowPlugin()],
        info={"description": API_DESCRIPTION},
    )
    spec.components.schema("ErrorOut", schema="ErrorOut")
    for route in routes:
        operations = {}
        for method in METHODS:
            name = f"on_{method}" + (f"_{route.suffix}" if route.suffix else "")
            responder = getattr(route.resource, name, None)
            if responder is None:
                continue
            operation = load_yaml_from_docstring(responder.__doc__ or "") or {}
            if not operation:
                summary = (responder.__doc__ or "").strip().splitlines()
                operation = {"summary": summary[0] if summary else name, "responses": {"200": {"description": "ok"}}}
            operation.setdefault("responses", {}).setdefault(
                "default",
                {"description": "error envelope", "content": {"application/json": {"schema": "ErrorOut"}}},
            )
            operation["x-access"] = route.access_for(method).describe()
            operations[method] = operation
        spec.path(path=route.path, operations=operations)
    return spec.to_dict()


class OpenApiDocument:
    uses_database = False

    def __init__(self, routes_provider) -> None:
        self._routes_provider = routes_provider
        self._document: dict | None = None

    def on_get(self, req, resp) -> None:
        """The OpenAPI 3 document of this API (raw, not enveloped)."""
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


class RootRedirect:
    """`/` on the API's host: the API documentation."""

    uses_database = False

    def on_get(self, req, resp) -> None:
        """Redirect to the API documentation (`/api/docs`)."""
        raise falcon.HTTPFound("/api/docs")


class DocsPage:
    uses_database = False

    def on_get(self, req, resp) -> None:
        """Human-readable API documentation (Swagger UI, served locally)."""
        resp.content_type = "text/html; charset=utf-8"
        resp.text = DOCS_PAGE

    def on_get_script(self, req, resp) -> None:
        """The page's start-up script (kept out of the HTML so a strict CSP can apply)."""
        resp.content_type = "application/javascript"
        resp.text = DOCS_SCRIPT

