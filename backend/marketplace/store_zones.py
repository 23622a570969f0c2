"""Store zones (Specification A): universes and their rayons, the reference data ad spaces and
campaigns point at.

Codes are derived once from the label and never change on rename; a collision takes the next
numeric suffix (`UNIV_FRAIS_2`). Label uniqueness (global for universes, per universe for
rayons) is on the normalized label and enforced by unique constraints. Archiving is the soft
delete; hard deletion is refused while anything references the zone.
"""

from __future__ import annotations

from peewee import IntegrityError, fn

from backend import clock
from backend.db import transaction
from backend.errors import Conflict, NotFound, ValidationError
from backend.marketplace.models import AdSpace, Campaign, Rayon, Universe, violated_constraint
from backend.marketplace.naming import LABEL_MAX_LENGTH, base_code, clean_label, code_candidates, normalize_label

UNIVERSE_PREFIX = "UNIV_"
RAYON_PREFIX = "RAYON_"
_LABEL_CONSTRAINTS = {"universe_normalized_label_key", "rayon_universe_label_key"}


def zone_tree(*, active_only: bool = False) -> list[Universe]:
    """Every universe with its rayons (`universe.rayon_list`), both ordered by sortOrder, then
    label; `active_only` leaves archived zones out (what ad spaces may be placed on)."""
    universes = Universe.select().order_by(Universe.sort_order, Universe.normalized_label)
    rayons = Rayon.select().order_by(Rayon.sort_order, Rayon.normalized_label)
    if active_only:
        universes = universes.where(Universe.archived_at.is_null())
        rayons = rayons.where(Rayon.archived_at.is_null())
    universes = list(universes)
    by_id = {u.id: u for u in universes}
    for universe in universes:
        universe.rayon_list = []
    for rayon in rayons:
        if rayon.universe_id in by_id:
            by_id[rayon.universe_id].rayon_list.append(rayon)
    return universes


def create_universe(*, label: str, is_transversal: bool = False) -> Universe:
    label = _valid_label(label)
    with transaction():
        position = Universe.select(fn.COALESCE(fn.MAX(Universe.sort_order), 0) + 1).scalar()
        return _insert_with_code(
            Universe, UNIVERSE_PREFIX, label=label, is_transversal=is_transversal, sort_order=position
        )


def create_rayon(*, universe_id: str, label: str) -> Rayon:
    label = _valid_label(label)
    with transaction():
        universe = _locked(Universe, universe_id)
        if universe.archived_at is not None:
            raise Conflict("the universe is archived", universeId=universe_id)
        position = (
            Rayon.select(fn.COALESCE(fn.MAX(Rayon.sort_order), 0) + 1).where(Rayon.universe == universe_id).scalar()
        )
        return _insert_with_code(Rayon, RAYON_PREFIX, label=label, universe=universe_id, sort_order=position)


def update_universe(
    universe_id: str,
    *,
    label: str | None = None,
    is_transversal: bool | None = None,
    sort_order: int | None = None,
    archived: bool | None = None,
) -> Universe:
    with transaction():
        universe = _locked(Universe, universe_id)
        if label is not None:
            universe.label = _valid_label(label)
            universe.normalized_label = normalize_label(universe.label)
        if is_transversal is not None:
            universe.is_transversal = is_transversal
        if sort_order is not None:
            universe.sort_order = sort_order
        if archived is not None:
            _archive_universe(universe, archived)
        universe.updated_at = clock.now()
        _save(universe)
    return universe


def _archive_universe(universe: Universe, archived: bool) -> None:
    """Archiving cascades to the rayons still active, stamped with the universe's own time, so
    un-archiving restores exactly those and leaves rayons archived on their own as they were."""
    if archived and universe.archived_at is None:
        universe.archived_at = clock.now()
        Rayon.update(archived_at=universe.archived_at).where(
            Rayon.universe == universe.id, Rayon.archived_at.is_null()
        ).execute()
    elif not archived and universe.archived_at is not None:
        Rayon.update(archived_at=None).where(
            Rayon.universe == universe.id, Rayon.archived_at == universe.archived_at
        ).execute()
        universe.archived_at = None


def update_rayon(
    rayon_id: str,
    *,
    label: str | None = None,
    universe_id: str | None = None,
    sort_order: int | None = None,
    archived: bool | None = None,
) -> Rayon:
    with transaction():
        rayon = _locked(Rayon, rayon_id)
        if universe_id is not None and universe_id != rayon.universe_id:
            target = _locked(Universe, universe_id)
            if target.archived_at is not None:
                raise Conflict("the target universe is archived", universeId=universe_id)
            rayon.universe = universe_id  # its ad spaces follow (ON UPDATE CASCADE, migration 046)
        if label is not None:
            rayon.label = _valid_label(label)
            rayon.normalized_label = normalize_label(rayon.label)
        if sort_order is not None:
            rayon.sort_order = sort_order
        if archived is not None:
            _archive_rayon(rayon, archived)
        rayon.updated_at = clock.now()
        _save(rayon)
    return rayon


def _archive_rayon(rayon: Rayon, archived: bool) -> None:
    if archived:
        rayon.archived_at = rayon.archived_at or clock.now()
        return
    universe = Universe.get_by_id(rayon.universe_id)
    if universe.archived_at is not None:
        raise Conflict("un-archive the universe first", universeId=universe.id)
    rayon.archived_at = None


def delete_universe(universe_id: str) -> None:
    """Hard delete, refused (409) while rayons, ad spaces or campaigns reference the universe."""
    with transaction():
        _locked(Universe, universe_id)
        references = {
            "rayons": Rayon.select().where(Rayon.universe == universe_id).count(),
            "adSpaces": AdSpace.select().where(AdSpace.placement_universe == universe_id).count(),
            "campaigns": Campaign.select().where(Campaign.universe_ids.contains(universe_id)).count(),
        }
        _refuse_if_referenced("universe", references)
        _delete(Universe, universe_id)


def delete_rayon(rayon_id: str) -> None:
    """Hard delete, refused (409) while ad spaces or campaigns reference the rayon."""
    with transaction():
        _locked(Rayon, rayon_id)
        references = {
            "adSpaces": AdSpace.select().where(AdSpace.placement_rayon == rayon_id).count(),
            "campaigns": Campaign.select().where(Campaign.rayon_ids.contains(rayon_id)).count(),
        }
        _refuse_if_referenced("rayon", references)
        _delete(Rayon, rayon_id)


def _refuse_if_referenced(kind: str, references: dict[str, int]) -> None:
    named = {name: count for name, count in references.items() if count}
    if named:
        raise Conflict(f"the {kind} is still referenced; archive it instead", referencedBy=named)


def _delete(model, zone_id: str) -> None:
    # Campaign arrays are checked above; ad spaces and rayons are also held by RESTRICT foreign
    # keys, so one inserted by a concurrent transaction still makes the deletion fail.
    try:
        with transaction():
            model.delete_by_id(zone_id)
    except IntegrityError as exc:
        raise Conflict("the zone became referenced; archive it instead", constraint=violated_constraint(exc)) from None


def check_placement(universe_id: str, rayon_id: str | None) -> None:
    """A placement must name an active universe and, if any, an active rayon of that universe."""
    universe = Universe.get_or_none(Universe.id == universe_id, Universe.archived_at.is_null())
    if universe is None:
        raise ValidationError("unknown or archived universe", fields={"placementUniverseId": ["unknown"]})
    if rayon_id is None:
        return
    rayon = Rayon.get_or_none(Rayon.id == rayon_id, Rayon.universe == universe_id, Rayon.archived_at.is_null())
    if rayon is None:
        raise ValidationError(
            "unknown or archived rayon, or not in the universe", fields={"placementRayonId": ["unknown"]}
        )


def _valid_label(label: str) -> str:
    label = clean_label(label)
    normalized = normalize_label(label)
    if not normalized:
        raise ValidationError("the label is empty", fields={"label": ["must not be blank"]})
    if len(label) > LABEL_MAX_LENGTH or len(normalized) > LABEL_MAX_LENGTH:
        # Case folding can lengthen a label ("ß" gives "ss"): both forms must fit their column.
        raise ValidationError("the label is too long",
                              fields={"label": [f"at most {LABEL_MAX_LENGTH} characters once normalized"]})
    return label


def _locked(model, zone_id: str):
    zone = model.select().where(model.id == zone_id).for_update().first()
    if zone is None:
        raise NotFound(f"{model.__name__.lower()} not found")
    return zone


def _insert_with_code(model, prefix: str, *, label: str, **fields):
    """Insert with the first free code; the unique constraint decides, the read only skips ahead."""
    base = base_code(prefix, label)
    taken = {code for (code,) in model.select(model.code).where(model.code.startswith(base)).tuples()}
    for code in code_candidates(base, taken):
        try:
            with transaction():
                return model.create(code=code, label=label, normalized_label=normalize_label(label), **fields)
        except IntegrityError as exc:
            constraint = violated_constraint(exc)
            if constraint in _LABEL_CONSTRAINTS:
                raise _duplicate_label(label) from None
            if constraint != f"{model._meta.table_name}_code_key":
                raise
    raise AssertionError("unreachable: code candidates are endless")


def _save(zone) -> None:
    try:
        with transaction():
            zone.save()
    except IntegrityError as exc:
        if violated_constraint(exc) in _LABEL_CONSTRAINTS:
            raise _duplicate_label(zone.label) from None
        raise


def _duplicate_label(label: str) -> Conflict:
    return Conflict("a zone with this label already exists", fields={"label": [f"duplicate: {label}"]})
