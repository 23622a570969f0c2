"""`/api/openapi.json` tells the truth about the route table (issue 21, item 6): every responder of
`api.routes` has its operation, every `{param}` of a path is declared, a JSON body is marked
required, a list that sorts names its sort columns, a status names its values, and a raw answer
names the media type it is served with. A route added tomorrow is checked the same way."""

from __future__ import annotations

import re

import pytest

from api.openapi import PATH_PARAMETER, responders

STATUS_NAME = re.compile(r"(^s|S)tatus(es)?$")



@pytest.fixture
def app_document(client):
    return client.simulate_get("/api/openapi.json").json


def _operations(document: dict):
    for path, item in document["paths"].items():
        for method, op in item.items():
            yield method, path, op


def _schema(document: dict, schema: dict) -> dict:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _properties(document: dict, schema: dict, seen: set[str]):
    """(name, property) of a schema and of every schema it nests, each component once."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        if name in seen:
            return
        seen.add(name)
    schema = _schema(document, schema)
    for key in ("allOf", "oneOf", "anyOf"):
        for part in schema.get(key, []):
            yield from _properties(document, part, seen)
    if "items" in schema:
        yield from _properties(document, schema["items"], seen)
    for name, prop in schema.get("properties", {}).items():
        yield name, prop
        yield from _properties(document, prop, seen)


def _enum(document: dict, prop: dict) -> list | None:
    prop = _schema(document, prop)
    if "items" in prop:
        prop = _schema(document, prop["items"])
    return prop.get("enum")


def test_every_responder_of_the_route_table_has_its_operation_with_its_path_parameters(app, app_document):
    missing, undeclared = [], []
    for route in app.deps.routes:
        item = app_document["paths"].get(route.path, {})
        names = set(PATH_PARAMETER.findall(route.path))
        for method, _ in responders(route):
            op = item.get(method)
            if op is None:
                missing.append(f"{method.upper()} {route.path}")
                continue
            declared = {p["name"] for p in op.get("parameters", []) if p["in"] == "path"}
            if declared != names or not all(p["required"] for p in op.get("parameters", []) if p["in"] == "path"):
                undeclared.append(f"{method.upper()} {route.path}: {sorted(declared)} != {sorted(names)}")
    assert missing == [] and undeclared == []


def test_a_json_body_is_required_unless_declared_optional(app, app_document):
    optional = {(method, route.path) for route in app.deps.routes for method, responder in responders(route)
                if not responder.operation.body_required}
    loose = [f"{method.upper()} {path}" for method, path, op in _operations(app_document)
             if "requestBody" in op and op["requestBody"]["required"] is not True and (method, path) not in optional]
    assert loose == []


def test_every_sorted_list_names_its_sort_columns(app_document):
    unnamed = [f"{method.upper()} {path}" for method, path, op in _operations(app_document)
               for p in op.get("parameters", [])
               if p["in"] == "query" and p["name"] == "sortBy" and not _enum(app_document, p["schema"])]
    assert unnamed == []


def test_every_status_names_its_values(app_document):
    """A status in a query, a body or an answer is a closed list: the document says which."""
    unnamed = set()
    for method, path, op in _operations(app_document):
        for p in op.get("parameters", []):
            if STATUS_NAME.search(p["name"]) and not _enum(app_document, p["schema"]):
                unnamed.add(f"{method.upper()} {path} ?{p['name']}")
        bodies = [media["schema"] for media in op.get("requestBody", {}).get("content", {}).values()]
        answers = [media["schema"] for status, answer in op["responses"].items() if status.startswith("2")
                   for media in answer.get("content", {}).values()]
        for schema in bodies + answers:
            for name, prop in _properties(app_document, schema, set()):
                if STATUS_NAME.search(name) and _schema(app_document, prop).get("type") != "object" \
                        and not _enum(app_document, prop) and not prop.get("x-open-values"):
                    unnamed.add(f"{method.upper()} {path} {name}")
    assert sorted(unnamed) == []


def test_a_raw_answer_names_the_media_type_it_is_served_with(app_document):
    vague = [f"{method.upper()} {path}" for method, path, op in _operations(app_document)
             for answer in op["responses"].values() for media_type in answer.get("content", {})
             if media_type in ("application/octet-stream", "*/*")]
    assert vague == []
