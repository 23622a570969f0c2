"""The catalogue's first data in production: universes, rayons and furniture types from a CSV file
(`vitrine catalog import FILE.csv [--dry-run]`, docs/deploy.md "First data").

One row per universe, rayon or furniture-type zone, with a header naming the columns:

    kind,universe,label,transversal,zone_code,zone_label,face_quantity,printable,width_mm,height_mm
    universe,,Frais,false,,,,,,
    rayon,Frais,Crèmerie,,,,,,,
    furniture_zone,,Tête de gondole,,FRONT,Face avant,2,true,1200,1800

The rows of one furniture type (same `label`) are its zones, in file order. The import goes
through the services the admin API uses (labels, codes and checks are theirs), in one
transaction: a file with any bad row writes nothing, and a dry run is the same import rolled
back. Importing a file again adds only what is missing: a universe is known by its label, a rayon
by its universe and label, a furniture type by its current name.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

from backend.db import transaction
from backend.errors import DomainError, ValidationError
from backend.marketplace.furniture import ZoneSpec, create_furniture_type
from backend.marketplace.models import FurnitureType, FurnitureTypeVersion, Rayon, Universe
from backend.marketplace.naming import normalize_label
from backend.marketplace.store_zones import create_rayon, create_universe

KINDS = ("universe", "rayon", "furniture_zone")
_TRUE, _FALSE = frozenset({"true", "1", "yes"}), frozenset({"false", "0", "no", ""})


@dataclass
class ImportReport:
    created: dict[str, list[str]] = field(default_factory=lambda: {kind: [] for kind in KINDS})
    existing: dict[str, list[str]] = field(default_factory=lambda: {kind: [] for kind in KINDS})

    def lines(self, dry_run: bool) -> list[str]:
        verb = "would create" if dry_run else "created"
        names = {"universe": "universes", "rayon": "rayons", "furniture_zone": "furniture types"}
        return [f"{names[kind]}: {verb} {len(self.created[kind])}"
                + (f" ({', '.join(self.created[kind])})" if self.created[kind] else "")
                + f", already there {len(self.existing[kind])}" for kind in KINDS]


class _DryRun(Exception):
    """Raised inside the import's transaction to roll a dry run back."""


def _flag(value: str, name: str) -> bool:
    value = (value or "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValidationError(f"{name} must be true or false, got {value!r}")


def _positive(row: dict, name: str) -> int:
    try:
        value = int((row.get(name) or "").strip())
    except ValueError:
        value = 0
    if value < 1:
        raise ValidationError(f"{name} must be a positive integer, got {row.get(name)!r}")
    return value


def read_rows(text: str) -> list[tuple[int, dict[str, str]]]:
    """The file's rows with their line numbers; a row of an unknown kind is refused by line."""
    reader = csv.DictReader(io.StringIO(text))
    missing = {"kind", "universe", "label"} - set(reader.fieldnames or ())
    if missing:
        raise ValidationError(f"the header lacks the column(s) {', '.join(sorted(missing))}")
    rows = []
    for row in reader:
        where = f"line {reader.line_num}"
        if (row.get("kind") or "").strip() not in KINDS:
            raise ValidationError(f"{where}: kind must be one of {', '.join(KINDS)}, got {row.get('kind')!r}")
        rows.append((reader.line_num, {k: (v or "").strip() for k, v in row.items() if k}))
    return rows


def _universe_by_label(label: str) -> Universe | None:
    return Universe.get_or_none(Universe.normalized_label == normalize_label(label))


def _import(rows: list[tuple[int, dict[str, str]]], report: ImportReport) -> None:
    types: dict[str, list[ZoneSpec]] = {}
    first_line: dict[str, int] = {}
    for line, row in rows:
        try:
            _import_row(row, report, types)
        except DomainError as exc:
            raise ValidationError(f"line {line}: {exc.message}") from None
        first_line.setdefault(row["label"], line)
    current = {version.name for version in FurnitureTypeVersion.select().join(
        FurnitureType, on=(FurnitureTypeVersion.furniture_type == FurnitureType.id)).where(
        FurnitureTypeVersion.version == FurnitureType.current_version)}
    for name, zones in types.items():
        if name in current:
            report.existing["furniture_zone"].append(name)
            continue
        try:
            create_furniture_type(name=name, zones=zones)
        except DomainError as exc:
            raise ValidationError(f"line {first_line[name]}: furniture type {name!r}: {exc.message}") from None
        report.created["furniture_zone"].append(name)


def _import_row(row: dict[str, str], report: ImportReport, types: dict[str, list[ZoneSpec]]) -> None:
    kind, label = row["kind"], row["label"]
    if kind == "universe":
        if _universe_by_label(label) is not None:
            report.existing[kind].append(label)
        else:
            create_universe(label=label, is_transversal=_flag(row.get("transversal", ""), "transversal"))
            report.created[kind].append(label)
    elif kind == "rayon":
        universe = _universe_by_label(row["universe"])
        if universe is None:
            raise ValidationError(f"no universe {row['universe']!r} (list it before its rayons)")
        if Rayon.get_or_none(Rayon.universe == universe.id,
                             Rayon.normalized_label == normalize_label(label)) is not None:
            report.existing[kind].append(label)
        else:
            create_rayon(universe_id=universe.id, label=label)
            report.created[kind].append(label)
    else:
        types.setdefault(label, []).append(ZoneSpec(
            code=row.get("zone_code", ""), label=row.get("zone_label", ""),
            face_quantity=_positive(row, "face_quantity"), printable=_flag(row.get("printable", ""), "printable"),
            width_mm=_positive(row, "width_mm"), height_mm=_positive(row, "height_mm")))


def import_catalog(text: str, *, dry_run: bool = False) -> ImportReport:
    """Import the CSV `text` in one transaction (rolled back for a dry run); a bad row raises a
    `DomainError` naming its line, and nothing is written."""
    report = ImportReport()
    rows = read_rows(text)
    try:
        with transaction():
            _import(rows, report)
            if dry_run:
                raise _DryRun
    except _DryRun:
        pass
    return report
