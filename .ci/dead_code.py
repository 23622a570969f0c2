"""The dead-code check: `vulture` as configured in pyproject.toml ([tool.vulture]), run by .ci/run
and tests/architecture/test_dead_code.py; exit status 3 when it finds unused code.

One thing vulture cannot see is added: marshmallow reads an object's attributes by a field's name
or its `attribute="a.b"`, so every name schemas/ reads counts as used. schemas/ itself is read for
names only (its fields are answer keys, never reported)."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

from vulture.config import make_config
from vulture.core import Vulture

ROOT = Path(__file__).resolve().parents[1]


def names_read_by(folder: Path) -> set[str]:
    names: set[str] = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.keyword) and node.arg == "attribute" and isinstance(node.value, ast.Constant):
                names.update(str(node.value.value).split("."))
    return names


def main(argv: list[str]) -> int:
    os.chdir(ROOT)
    config = make_config(argv)
    vulture = Vulture(verbose=config["verbose"], ignore_names=config["ignore_names"],
                      ignore_decorators=config["ignore_decorators"])
    vulture.scavenge(config["paths"], exclude=config["exclude"])
    vulture.used_names |= names_read_by(ROOT / "schemas")
    return vulture.report(min_confidence=config["min_confidence"], sort_by_size=config["sort_by_size"],
                          make_whitelist=config["make_whitelist"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
