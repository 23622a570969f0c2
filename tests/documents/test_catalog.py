"""The catalog is checked at start: a malformed file refuses boot with a clear message."""

from __future__ import annotations

import json
import shutil

import pytest

from backend.documents import catalog
from backend.documents.catalog import CatalogError, load_catalog
from backend.documents.formatting import typed_value


@pytest.fixture
def broken_catalog(tmp_path, monkeypatch):
    """A copy of the real catalog to damage; the cached catalog is restored afterwards."""
    entries, defaults = tmp_path / "entries", tmp_path / "defaults"
    shutil.copytree(catalog.ENTRIES_DIR, entries)
    shutil.copytree(catalog.DEFAULTS_DIR, defaults)
    monkeypatch.setattr(catalog, "ENTRIES_DIR", entries)
    monkeypatch.setattr(catalog, "DEFAULTS_DIR", defaults)
    load_catalog.cache_clear()

    def edit(key: str, change) -> None:
        path = entries / f"{key}.json"
        raw = json.loads(path.read_text())
        change(raw)
        path.write_text(json.dumps(raw))

    edit.entries, edit.defaults = entries, defaults
    yield edit
    load_catalog.cache_clear()


def test_every_entry_is_complete_and_its_examples_typed():
    for entry in load_catalog().values():
        assert entry.title and entry.category and entry.render_context and entry.catalog_version
        for variable in entry.variables:
            typed_value(variable.type, variable.example)
    assert [e.template_key for e in load_catalog().values() if e.is_required_for_kyb] == [
        "cgu_acceptance", "framework_contract", "sepa_mandate"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda raw: raw.update(templateKey="Framework-Contract"), "must match [a-z0-9_]+"),
        (lambda raw: raw["variables"][0].update(type="money"), "unknown type 'money'"),
        (lambda raw: raw["variables"][0].update(example=12), "example must be a string"),
        (lambda raw: raw["variables"].append(dict(raw["variables"][0])), "declared twice"),
        (lambda raw: raw.pop("title"), "title must be a non-empty string"),
    ],
)
def test_malformed_entries_are_refused(broken_catalog, change, message):
    broken_catalog("invoice", change)
    with pytest.raises(CatalogError, match=r"invoice\.json") as caught:
        load_catalog()
    assert message in str(caught.value)


def test_default_content_using_an_undeclared_variable_is_refused(broken_catalog):
    (broken_catalog.defaults / "invoice.md").write_text("# Facture {{ unknownThing }}\n")
    with pytest.raises(CatalogError, match=r"defaults/invoice\.md: .*unknownThing"):
        load_catalog()


def test_the_app_refuses_to_boot_with_a_bad_catalog(broken_catalog, make_app):
    broken_catalog("invoice", lambda raw: raw["variables"][0].update(type="money"))
    with pytest.raises(CatalogError, match="unknown type 'money'"):
        make_app()


def test_the_cli_reports_a_bad_catalog_as_a_configuration_error(broken_catalog, capsys):
    from ops.cli import main

    broken_catalog("invoice", lambda raw: raw.update(templateKey="bad key"))
    assert main(["migrate"]) == 2
    assert "configuration error" in capsys.readouterr().err
