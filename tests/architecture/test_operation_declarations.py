"""Every responder declares its operation once (`api.operations.operation`), and the declaration is
what validates the request, dumps the answer and writes the OpenAPI operation."""

from __future__ import annotations

import re
import warnings

import falcon
import falcon.testing
from marshmallow import Schema, fields, validate

from api import errors
from api.access import PUBLIC, Route
from api.openapi import build_openapi, responders
from api.operations import Answer, operation
from schemas.common import enveloped


def test_every_responder_of_the_route_table_declares_its_operation(app):
    undeclared = [f"{method.upper()} {route.path}" for route in app.deps.routes
                  for method, responder in responders(route) if getattr(responder, "operation", None) is None]
    assert undeclared == []


def test_the_document_is_built_without_a_schema_name_clash_and_declares_every_path_parameter(app):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # apispec warns when two schema classes share a name
        document = build_openapi(app.deps.routes)
    for path, item in document["paths"].items():
        names = set(re.findall(r"{(\w+)}", path))
        for method, op in item.items():
            declared = {p["name"] for p in op.get("parameters", []) if p["in"] == "path"}
            assert declared == names, (method, path)


class ItemIn(Schema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=20))


class ItemQuery(Schema):
    limit = fields.Integer(load_default=10, validate=validate.Range(min=1, max=50))


class ItemPath(Schema):
    number = fields.Integer(required=True, validate=validate.Range(min=1))


class ItemOut(Schema):
    number = fields.Integer(required=True)
    name = fields.String(attribute="label", required=True)


class Item:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    @operation("Make an item", tags=("probe",), path=ItemPath, body=ItemIn, query=ItemQuery, answer=ItemOut,
               status=201, other_answers={200: (ItemOut, "already there")}, errors={409: "CONFLICT"})
    def on_post(self, req, resp, number: int, body: dict, query: dict):
        self.calls.append((number, body, query))
        return Answer({"number": number, "label": body["name"]}, 200 if number == 7 else 201)


def _probe() -> tuple[falcon.testing.TestClient, Item, Route]:
    app = falcon.App()
    errors.register(app)
    item = Item()
    route = Route("/probe/{number}", item, PUBLIC)
    app.add_route(route.path, item)
    return falcon.testing.TestClient(app), item, route


def test_the_declaration_validates_the_request_and_dumps_the_answer():
    client, item, _ = _probe()
    made = client.simulate_post("/probe/3", params={"limit": "5"}, json={"name": "vitrine"})
    assert made.status_code == 201 and made.json == {"ok": True, "data": {"number": 3, "name": "vitrine"}}
    assert item.calls == [(3, {"name": "vitrine"}, {"limit": 5})]
    assert client.simulate_post("/probe/7", json={"name": "again"}).status_code == 200
    for path, params, body, field in [("/probe/0", {}, {"name": "x"}, "number"),
                                      ("/probe/3", {"limit": "99"}, {"name": "x"}, "limit"),
                                      ("/probe/3", {}, {"name": ""}, "name"),
                                      ("/probe/3", {}, {}, "name")]:
        refused = client.simulate_post(path, params=params, json=body)
        assert refused.status_code == 400 and field in refused.json["error"]["details"]["fields"], (path, body)
    assert len(item.calls) == 2  # nothing reached the responder


def test_the_declaration_writes_the_openapi_operation():
    _, _, route = _probe()
    op = build_openapi([route])["paths"]["/probe/{number}"]["post"]
    assert op["summary"] == "Make an item" and op["tags"] == ["probe"]
    assert op["requestBody"] == {"required": True,
                                 "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ItemIn"}}}}
    assert {(p["in"], p["name"], p["required"]) for p in op["parameters"]} == {("path", "number", True),
                                                                               ("query", "limit", False)}
    envelope = {"$ref": f"#/components/schemas/{enveloped(ItemOut).__name__}"}
    assert op["responses"]["201"]["content"]["application/json"]["schema"] == envelope
    assert op["responses"]["200"]["description"] == "already there"
    assert op["responses"]["409"]["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorOut")
