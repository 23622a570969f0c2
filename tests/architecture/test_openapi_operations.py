"""The OpenAPI document keeps the paths and operations it had before the area packages moved.

`operations.txt` is the list taken from the document before the move (one `METHOD path` a line).
A route added on purpose is added to the file in the same change; a route that disappears is a
regression this test catches.
"""

from __future__ import annotations

from pathlib import Path

STORED = Path(__file__).with_name("operations.txt")
METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}


def _operations(document: dict) -> set[str]:
    return {
        f"{method.upper()} {path}"
        for path, item in document["paths"].items()
        for method in item
        if method in METHODS
    }


def test_openapi_lists_every_stored_operation(client):
    document = client.simulate_get("/api/openapi.json").json
    stored = {line for line in STORED.read_text().splitlines() if line.strip()}
    assert stored - _operations(document) == set()
