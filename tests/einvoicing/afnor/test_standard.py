"""Our description of XP Z12-013 against the standard's own OpenAPI documents (annex A, "AFNOR Flow
Service", annex B, "AFNOR Directory Service", the version ours names), when `AFNOR_OPENAPI_DIR`
names a folder holding them (they are not redistributed with Vitrine: docs/einvoicing.md,
"Choosing a platform"). Every operation, parameter, body, answer, property and value of ours
must be the standard's: no field we send or read that the standard does not define."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.einvoicing.afnor.conftest import DESCRIPTIONS

OFFICIAL_DIR = os.environ.get("AFNOR_OPENAPI_DIR")
pytestmark = pytest.mark.skipif(not OFFICIAL_DIR, reason="AFNOR_OPENAPI_DIR does not name the standard's files")
DOCUMENTS = [("flow-service", "Flow_Service"), ("directory-service", "Directory_Service")]


def official(marker: str) -> dict:
    [path] = [p for p in Path(OFFICIAL_DIR or ".").glob("*.json") if marker in p.name]
    return json.loads(path.read_text())


def resolve(document: dict, node: dict) -> dict:
    """`node` with its `$ref` followed and its `allOf` merged (properties, required)."""
    while "$ref" in node:
        target: object = document
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]  # type: ignore[index]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}  # type: ignore[dict-item]
    if "allOf" in node:
        merged: dict = {"type": "object", "properties": {}, "required": []}
        for part in node["allOf"]:
            part = resolve(document, part)
            merged["properties"].update(part.get("properties", {}))
            merged["required"] += part.get("required", [])
        node = {**{k: v for k, v in node.items() if k != "allOf"}, **merged}
    return node


def conforms(ours_doc: dict, ours: dict, theirs_doc: dict, theirs: dict, where: str) -> list[str]:
    """What of `ours` the standard's schema `theirs` does not define (empty: nothing)."""
    ours, theirs = resolve(ours_doc, ours), resolve(theirs_doc, theirs)
    alternatives = theirs.get("oneOf") or theirs.get("anyOf")
    if alternatives:
        results = [conforms(ours_doc, ours, theirs_doc, alternative, where) for alternative in alternatives]
        return [] if any(not result for result in results) else results[0]
    problems = []
    if "type" in ours and "type" in theirs and ours["type"] != theirs["type"]:
        problems.append(f"{where}: type {ours['type']}, the standard's {theirs['type']}")
    if "enum" in ours and not set(ours["enum"]) <= set(theirs.get("enum", ours["enum"])):
        problems.append(f"{where}: values {sorted(set(ours['enum']) - set(theirs['enum']))} are not the standard's")
    for name, schema in ours.get("properties", {}).items():
        if name not in theirs.get("properties", {}):
            problems.append(f"{where}.{name}: not defined by the standard")
        else:
            problems += conforms(ours_doc, schema, theirs_doc, theirs["properties"][name], f"{where}.{name}")
    if "items" in ours:
        problems += conforms(ours_doc, ours["items"], theirs_doc, theirs.get("items", {}), f"{where}[]")
    return problems


@pytest.mark.parametrize(("ours_name", "marker"), DOCUMENTS)
def test_every_operation_and_field_of_ours_is_the_standard_s(ours_name, marker):
    ours = json.loads((DESCRIPTIONS / f"{ours_name}.json").read_text())
    theirs = official(marker)
    assert ours["info"]["version"] == theirs["info"]["version"]
    problems = []
    for path, operations in ours["paths"].items():
        for method, operation in operations.items():
            where = f"{method.upper()} {path}"
            their_operation = theirs["paths"].get(path, {}).get(method)
            if their_operation is None:
                problems.append(f"{where}: not an operation of the standard")
                continue
            their_parameters = {(p["name"], p["in"]): p for p in map(
                lambda p: resolve(theirs, p), their_operation.get("parameters", []))}
            for parameter in (resolve(ours, p) for p in operation.get("parameters", [])):
                key = (parameter["name"], parameter["in"])
                if key not in their_parameters:
                    problems.append(f"{where}: parameter {key} is not the standard's")
                else:
                    problems += conforms(ours, parameter["schema"], theirs, their_parameters[key]["schema"],
                                         f"{where} {key[0]}")
            their_body = resolve(theirs, their_operation.get("requestBody", {}))
            for media, content in resolve(ours, operation.get("requestBody", {})).get("content", {}).items():
                if media not in their_body.get("content", {}):
                    problems.append(f"{where}: body {media} is not the standard's")
                else:
                    problems += conforms(ours, content["schema"], theirs, their_body["content"][media]["schema"],
                                         f"{where} body")
            for status, answer in operation["responses"].items():
                their_answer = their_operation["responses"].get(status)
                if their_answer is None:
                    problems.append(f"{where}: answer {status} is not the standard's")
                    continue
                their_content = resolve(theirs, their_answer).get("content", {})
                for media, content in resolve(ours, answer).get("content", {}).items():
                    if media not in their_content:
                        problems.append(f"{where} {status}: {media} is not the standard's")
                    elif "schema" in content:
                        problems += conforms(ours, content["schema"], theirs, their_content[media]["schema"],
                                             f"{where} {status}")
    assert problems == []


def test_the_check_finds_a_field_the_standard_does_not_define():
    """The check itself: a `flowType` in `FlowInfo` (the spec operator's, not the standard's)."""
    ours = json.loads((DESCRIPTIONS / "flow-service.json").read_text())
    ours["components"]["schemas"]["FlowInfo"]["properties"]["flowType"] = {"type": "string"}
    theirs = official("Flow_Service")
    problems = conforms(ours, {"$ref": "#/components/schemas/FlowInfo"}, theirs,
                        {"$ref": "#/components/schemas/FlowInfo"}, "FlowInfo")
    assert problems == ["FlowInfo.flowType: not defined by the standard"]


def test_the_callback_we_accept_is_the_standard_s():
    """Annex A's `WebhookCallback`: the same callback expression, and a body of the standard's."""
    ours = json.loads((DESCRIPTIONS / "flow-service.json").read_text())
    theirs = official("Flow_Service")
    ours_callback = ours["components"]["callbacks"]["WebhookCallback"]
    their_callback = theirs["components"]["callbacks"]["WebhookCallback"]
    assert list(ours_callback) == list(their_callback)
    [(expression, operation)] = ours_callback.items()
    their_body = their_callback[expression]["post"]["requestBody"]["content"]["application/json"]["schema"]
    ours_body = operation["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert conforms(ours, ours_body, theirs, their_body, "WebhookCallbackContent") == []
