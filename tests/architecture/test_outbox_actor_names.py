"""Every actor name the outbox can enqueue is a declared Dramatiq actor.

The names come from two places: the subscriber table of domain events (`backend.events`) and the
first argument of every `outbox.enqueue(...)` call in `backend/`, a string literal or a module
constant. A typo there would otherwise only show as a message no worker ever consumes.
"""

from __future__ import annotations

import ast
from pathlib import Path

import dramatiq

from backend import events

BACKEND = Path(__file__).resolve().parents[2] / "backend"


def _constants(tree: ast.Module) -> dict[str, str]:
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node.value.value
    return found


def _enqueued_names() -> set[str]:
    names = set()
    for path in BACKEND.rglob("*.py"):
        if path == BACKEND / "events.py":  # its names are the subscriber table, checked below
            continue
        tree = ast.parse(path.read_text())
        constants = _constants(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "enqueue" and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "outbox" and node.args):
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant):
                names.add(first.value)
            elif isinstance(first, ast.Name):
                assert first.id in constants, f"{path}: outbox.enqueue({first.id}) is not a module constant"
                names.add(constants[first.id])
            else:
                raise AssertionError(f"{path}:{node.lineno}: outbox.enqueue needs a literal actor name")
    return names


def test_every_enqueued_actor_name_is_a_declared_actor():
    import actors  # noqa: F401  (declares every actor)

    declared = set(dramatiq.get_broker().actors)
    subscribers = {name for names in events.SUBSCRIBERS.values() for name in names}
    enqueued = _enqueued_names()
    assert enqueued, "the scan found no outbox.enqueue call"
    assert (subscribers | enqueued) - declared == set()
