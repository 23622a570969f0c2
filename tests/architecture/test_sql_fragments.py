"""One convention for a piece of SQL another statement embeds (docs/development.md "SQL"): the
module owning the tables writes it as a `prepared.Fragment`, and the function giving its values
returns through `Fragment.values` / `prepared.bind`, which check the names against the text."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from backend import prepared

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("backend", "api", "actors", "ops")


def embedded_sql_strings(root: Path = ROOT, layers: tuple[str, ...] = LAYERS) -> list[str]:
    """`<module>.<NAME>` for each module-level constant holding SQL with named values (`%(x)s`)
    as a plain string while another module uses it."""
    paths = [path for layer in layers for path in sorted((root / layer).rglob("*.py"))]
    sources = {path: path.read_text() for path in paths}
    plain: dict[tuple[str, str], Path] = {}
    for path, source in sources.items():
        for node in ast.parse(source).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                text = ast.get_source_segment(source, node.value) or ""
                is_fragment = isinstance(node.value, ast.Call) and "Fragment" in ast.unparse(node.value.func)
                if name.isupper() and "%(" in text and not is_fragment and "Statement(" not in text:
                    plain[(path.stem, name)] = path
    found = []
    for (module, name), owner in plain.items():
        users = [path for path, source in sources.items() if path != owner
                 and (f"{module}.{name}" in source or ((f"import {name}" in source or f" {name}," in source)
                      and f"{module} import" in source))]
        if users:
            found.append(".".join((*owner.relative_to(root).with_suffix("").parts, name)))
    return sorted(found)


def test_every_embedded_piece_of_sql_is_a_fragment():
    assert embedded_sql_strings() == []


def test_the_check_sees_a_plain_string_another_module_embeds(tmp_path):
    (tmp_path / "backend").mkdir()
    (tmp_path / "backend" / "records.py").write_text(
        'SETTLE = "UPDATE t SET a = %(a)s"\nOWN = "SELECT %(b)s"\nKEPT = prepared.Fragment("SELECT %(c)s")\n')
    (tmp_path / "backend" / "collection.py").write_text(
        'from backend import records\nSQL = f"WITH s AS ({records.SETTLE}) {records.KEPT}"\n')
    assert embedded_sql_strings(tmp_path, ("backend",)) == ["backend.records.SETTLE"]


def test_a_fragment_takes_its_names_and_no_other():
    fragment = prepared.Fragment("UPDATE t SET a = %(a)s WHERE id = %(id)s AND a <> %(a)s")
    assert fragment.names == {"a", "id"}
    assert fragment.values(a=1, id="x") == {"a": 1, "id": "x"}
    with pytest.raises(ValueError, match=r"missing \['id'\], unexpected \['b'\]"):
        fragment.values(a=1, b=2)
    other = prepared.Fragment("SELECT %(b)s")
    assert prepared.bind((fragment, other), {"a": 1, "id": "x", "b": 2}) == {"a": 1, "id": "x", "b": 2}
    with pytest.raises(ValueError, match=r"missing \['b'\]"):
        prepared.bind((fragment, other), {"a": 1, "id": "x"})
    assert f"WITH f AS ({fragment})" == f"WITH f AS ({fragment.sql})"
