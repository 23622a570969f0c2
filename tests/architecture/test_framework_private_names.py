"""The frameworks are used through their public APIs only: no private name of Dramatiq, redis-py,
psycopg2, peewee (with playhouse), periodiq, Falcon or marshmallow is imported or read.

A private name is one with a single leading underscore (a dunder is a protocol name, public). The
check walks the syntax tree of every module:

- an import of a private name (`from peewee import _atomic`) or from a private module
  (`from dramatiq.brokers import _x`, `import redis._parsers`) of one of those packages;
- a private attribute (`x._name`) read or written on an expression that starts from one of their
  objects: a name the module imported from one of those packages (`RedisBroker._dispatch`,
  `peewee.Model._x`), or a name the project gives their objects everywhere (`database`, the peewee
  proxy; `broker`; `req`/`resp`, Falcon's request and response; `cursor`, `conn`, `connection`,
  `pipe`, `pool`). `self` and `cls` are a class's own business, and an object of the project's
  own (`platform_broker._broker`, a module of ours) is not theirs.

Allowed: `_meta` of a peewee model, which peewee documents as its public metadata API ("Model
options and table metadata", docs.peewee-orm.com/en/latest/peewee/models.html), and the
documented methods of named tuples (`_replace`, `_asdict`, `_fields`, `_make`).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AREAS = ("backend", "api", "actors", "ops", "storage", "schemas", "tests")
FRAMEWORKS = frozenset({"dramatiq", "redis", "psycopg2", "peewee", "playhouse", "periodiq", "falcon", "marshmallow"})
THEIR_OBJECTS = frozenset({"database", "broker", "req", "resp", "cursor", "conn", "connection", "pipe"})
DOCUMENTED = frozenset({"_meta", "_replace", "_asdict", "_fields", "_make"})


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in DOCUMENTED


def _framework(module: str | None) -> bool:
    return module is not None and module.split(".")[0] in FRAMEWORKS


def _root(node: ast.expr) -> ast.expr:
    """The expression an attribute chain starts from (`a` in `a.b().c[0]._d`)."""
    while isinstance(node, ast.Attribute | ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def violations(source: str, filename: str = "<snippet>") -> list[str]:
    """Every private framework name `source` imports or reads, as `file:line: what`."""
    tree = ast.parse(source, filename)
    theirs = set(THEIR_OBJECTS)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _framework(alias.name):
                    if any(_private(part) for part in alias.name.split(".")):
                        found.append(f"{filename}:{node.lineno}: import {alias.name}")
                    theirs.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _framework(node.module):
            if any(_private(part) for part in node.module.split(".")):
                found.append(f"{filename}:{node.lineno}: from {node.module} import")
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"{filename}:{node.lineno}: from {node.module} import {alias.name}")
                theirs.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            root = _root(node.value)
            if isinstance(root, ast.Name) and root.id in theirs and root.id not in ("self", "cls"):
                found.append(f"{filename}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_private_framework_name_is_used_anywhere():
    found = []
    for area in AREAS:
        for path in sorted((ROOT / area).rglob("*.py")):
            found += violations(path.read_text(), str(path.relative_to(ROOT)))
    assert found == []


def test_the_check_catches_each_kind_of_use():
    snippet = (
        "import redis._parsers\n"
        "from dramatiq.brokers.redis import _RedisConsumer, RedisBroker\n"
        "from peewee._private import x\n"
        "from backend.db import database\n"
        "RedisBroker._max_unpack_size()\n"
        "database._state.transactions.clear()\n"
        "database.obj._close(None)\n"
        "def on_get(req, resp):\n"
        "    return req._params\n"
    )
    assert sorted(line.split(": ", 1)[1] for line in violations(snippet)) == sorted([
        "import redis._parsers",
        "from dramatiq.brokers.redis import _RedisConsumer",
        "from peewee._private import",
        "RedisBroker._max_unpack_size",
        "database._state",
        "database.obj._close",
        "req._params",
    ])


def test_the_project_s_own_and_documented_names_pass():
    snippet = (
        "from peewee import Model\n"
        "from actors import broker as platform_broker\n"
        "class Row(Model):\n"
        "    def fields(self):\n"
        "        return self._meta.fields, Row._meta.table_name, self._cache\n"
        "platform_broker._broker = None\n"
        "parts = parts._replace(path='/')\n"
        "helper._private()\n"
    )
    assert violations(snippet) == []
