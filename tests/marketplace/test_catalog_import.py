"""`vitrine catalog import FILE.csv [--dry-run]`: the catalogue's first data in production."""

from __future__ import annotations

import pytest

from backend.errors import ValidationError
from backend.marketplace.catalog_import import import_catalog
from backend.marketplace.models import FurnitureType, FurnitureZone, Rayon, Universe
from ops import cli

HEADER = "kind,universe,label,transversal,zone_code,zone_label,face_quantity,printable,width_mm,height_mm\n"
CATALOG = HEADER + (
    "universe,,Import Frais,false,,,,,,\n"
    "universe,,Import Saisonnier,true,,,,,,\n"
    "rayon,Import Frais,Crèmerie,,,,,,,\n"
    "rayon,import frais,Fromages,,,,,,,\n"
    "furniture_zone,,Gondole importée,,FRONT,Face avant,2,true,1200,1800\n"
    "furniture_zone,,Gondole importée,,SIDE,Joue,2,false,400,1800\n"
)


def _counts() -> tuple[int, int, int, int]:
    return Universe.select().count(), Rayon.select().count(), FurnitureType.select().count(), \
        FurnitureZone.select().count()


def test_an_import_creates_the_rows_once_and_a_second_import_only_what_is_missing():
    before = _counts()
    report = import_catalog(CATALOG)
    assert report.created == {"universe": ["Import Frais", "Import Saisonnier"], "rayon": ["Crèmerie", "Fromages"],
                              "furniture_zone": ["Gondole importée"]}
    assert _counts() == (before[0] + 2, before[1] + 2, before[2] + 1, before[3] + 2)
    assert Universe.get(Universe.label == "Import Saisonnier").is_transversal
    again = import_catalog(CATALOG + "rayon,Import Frais,Yaourts,,,,,,,\n")
    assert again.created == {"universe": [], "rayon": ["Yaourts"], "furniture_zone": []}
    assert len(again.existing["rayon"]) == 2


def test_a_dry_run_reports_the_same_and_writes_nothing():
    before = _counts()
    report = import_catalog(CATALOG, dry_run=True)
    assert len(report.created["universe"]) == 2 and _counts() == before
    assert report.lines(dry_run=True)[0] == "universes: would create 2 (Import Frais, Import Saisonnier), " \
                                            "already there 0"


@pytest.mark.parametrize("bad_row,message", [
    ("rayon,Nowhere,Rayon,,,,,,,\n", "line 8: no universe 'Nowhere'"),
    ("furniture_zone,,Autre,,FRONT,Face,0,true,10,10\n", "line 8: face_quantity must be a positive integer"),
    ("shelf,,X,,,,,,,\n", "line 8: kind must be one of universe, rayon, furniture_zone"),
    ("universe,,Import Frais 2,perhaps,,,,,,\n", "line 8: transversal must be true or false"),
])
def test_a_bad_row_names_its_line_and_nothing_is_written(bad_row, message):
    before = _counts()
    with pytest.raises(ValidationError) as refused:
        import_catalog(CATALOG + bad_row)
    assert refused.value.message.startswith(message)
    assert _counts() == before


def test_the_command_imports_a_file_and_says_what_it_did(tmp_path, capsys):
    path = tmp_path / "catalog.csv"
    path.write_text(CATALOG, encoding="utf-8")
    assert cli.main(["catalog", "import", str(path), "--dry-run"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "dry run: nothing written"
    assert cli.main(["catalog", "import", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("universes: created 2")
    path.write_text(CATALOG + "rayon,Nowhere,Rayon,,,,,,,\n", encoding="utf-8")
    assert cli.main(["catalog", "import", str(path)]) == 1
    assert "line 8: no universe 'Nowhere'" in capsys.readouterr().err
