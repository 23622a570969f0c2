"""Store zones (Specification A): codes, label uniqueness, ordering, archive cascade."""

from datetime import UTC, datetime

import pytest

from backend import clock
from backend.errors import Conflict, NotFound, ValidationError
from backend.marketplace import store_zones
from backend.marketplace.naming import base_code, normalize_label


@pytest.mark.parametrize(
    ("prefix", "label", "code"),
    [
        ("UNIV_", "Épicerie salée", "UNIV_EPICERIE_SALEE"),
        ("UNIV_", "  Fruits & Légumes ", "UNIV_FRUITS_LEGUMES"),
        ("RAYON_", "Œufs, crèmerie", "RAYON_OEUFS_CREMERIE"),
        ("RAYON_", "Boulangerie-Pâtisserie", "RAYON_BOULANGERIE_PATISSERIE"),
        ("UNIV_", "¡¿!", "UNIV_ZONE"),
    ],
)
def test_code_is_the_label_without_diacritics(prefix, label, code):
    assert base_code(prefix, label) == code


def test_normalized_label_ignores_case_accents_and_spaces():
    assert normalize_label("  Épicerie   SALÉE ") == normalize_label("epicerie salee") == "epicerie salee"


def test_ligatures_are_one_label_and_one_code():
    assert normalize_label("Œufs") == normalize_label("oeufs") == "oeufs"
    universe = store_zones.create_universe(label="Crémerie")
    store_zones.create_rayon(universe_id=universe.id, label="Œufs")
    with pytest.raises(Conflict):
        store_zones.create_rayon(universe_id=universe.id, label="Oeufs")
    assert store_zones.create_rayon(universe_id=universe.id, label="Bœuf").code == "RAYON_BOEUF"


def test_a_label_too_long_once_normalized_is_a_validation_error():
    with pytest.raises(ValidationError) as refused:
        store_zones.create_universe(label="ß" * 70)  # 70 characters, 140 once case-folded
    assert "label" in refused.value.details["fields"]
    assert store_zones.create_universe(label="ß" * 60).normalized_label == "ss" * 60


def test_colliding_codes_take_a_numeric_suffix():
    first = store_zones.create_universe(label="Frais")
    second = store_zones.create_universe(label="Frais!")
    third = store_zones.create_universe(label="Frais?")
    assert [first.code, second.code, third.code] == ["UNIV_FRAIS", "UNIV_FRAIS_2", "UNIV_FRAIS_3"]


def test_rayon_codes_are_unique_across_universes():
    a = store_zones.create_universe(label="Liquides")
    b = store_zones.create_universe(label="Droguerie")
    one = store_zones.create_rayon(universe_id=a.id, label="Eaux")
    two = store_zones.create_rayon(universe_id=b.id, label="Eaux")
    assert (one.code, two.code) == ("RAYON_EAUX", "RAYON_EAUX_2")


def test_code_is_stable_on_rename_and_the_old_code_stays_taken():
    universe = store_zones.create_universe(label="Bio")
    renamed = store_zones.update_universe(universe.id, label="Produits bio")
    assert renamed.code == "UNIV_BIO" and renamed.label == "Produits bio"
    assert store_zones.create_universe(label="Bio").code == "UNIV_BIO_2"


def test_universe_label_is_unique_on_the_normalized_label():
    store_zones.create_universe(label="Épicerie salée")
    with pytest.raises(Conflict) as refused:
        store_zones.create_universe(label="EPICERIE   salee")
    assert refused.value.details["fields"]["label"]


def test_rename_onto_an_existing_label_is_refused():
    store_zones.create_universe(label="Surgelés")
    other = store_zones.create_universe(label="Glaces")
    with pytest.raises(Conflict):
        store_zones.update_universe(other.id, label="surgeles")


def test_rayon_label_is_unique_within_its_universe_only():
    a = store_zones.create_universe(label="Hygiène")
    b = store_zones.create_universe(label="Bébé")
    store_zones.create_rayon(universe_id=a.id, label="Soins")
    store_zones.create_rayon(universe_id=b.id, label="Soins")
    with pytest.raises(Conflict):
        store_zones.create_rayon(universe_id=a.id, label="SOINS")


def test_moving_a_rayon_checks_the_label_in_the_target_universe():
    a = store_zones.create_universe(label="Boissons")
    b = store_zones.create_universe(label="Apéritif")
    moved = store_zones.create_rayon(universe_id=a.id, label="Sodas")
    store_zones.create_rayon(universe_id=b.id, label="Chips")
    assert store_zones.update_rayon(moved.id, universe_id=b.id).universe_id == b.id
    clash = store_zones.create_rayon(universe_id=a.id, label="Chips")
    with pytest.raises(Conflict):
        store_zones.update_rayon(clash.id, universe_id=b.id)


def test_transversal_flag_is_set_and_changed():
    universe = store_zones.create_universe(label="Marque distributeur", is_transversal=True)
    assert universe.is_transversal and universe.sort_order >= 1
    assert store_zones.update_universe(universe.id, is_transversal=False).is_transversal is False


def test_tree_is_ordered_by_sort_order():
    first = store_zones.create_universe(label="Premier")
    second = store_zones.create_universe(label="Second")
    store_zones.update_universe(second.id, sort_order=0)
    r1 = store_zones.create_rayon(universe_id=first.id, label="Un")
    r2 = store_zones.create_rayon(universe_id=first.id, label="Deux")
    store_zones.update_rayon(r2.id, sort_order=-1)
    tree = [u for u in store_zones.zone_tree() if u.id in (first.id, second.id)]
    assert [u.id for u in tree] == [second.id, first.id]
    assert [r.id for r in tree[1].rayon_list] == [r2.id, r1.id]


def test_archive_cascades_to_rayons_and_unarchive_restores_only_those():
    universe = store_zones.create_universe(label="Saisonnier")
    kept = store_zones.create_rayon(universe_id=universe.id, label="Noël")
    alone = store_zones.create_rayon(universe_id=universe.id, label="Pâques")
    with clock.frozen_at(datetime(2026, 1, 5, tzinfo=UTC)):
        store_zones.update_rayon(alone.id, archived=True)
    with clock.frozen_at(datetime(2026, 2, 5, tzinfo=UTC)):
        archived = store_zones.update_universe(universe.id, archived=True)
    rayons = {r.id: r for r in store_zones.zone_tree() if r.id == universe.id for r in r.rayon_list}
    assert archived.archived_at is not None
    assert all(r.archived_at is not None for r in rayons.values())
    store_zones.update_universe(universe.id, archived=False)
    tree = next(u for u in store_zones.zone_tree() if u.id == universe.id)
    states = {r.id: r.archived_at for r in tree.rayon_list}
    assert states[kept.id] is None and states[alone.id] is not None


def test_rayon_of_an_archived_universe_cannot_be_unarchived_or_created():
    universe = store_zones.create_universe(label="Ancien")
    rayon = store_zones.create_rayon(universe_id=universe.id, label="Vieux")
    store_zones.update_universe(universe.id, archived=True)
    with pytest.raises(Conflict):
        store_zones.update_rayon(rayon.id, archived=False)
    with pytest.raises(Conflict):
        store_zones.create_rayon(universe_id=universe.id, label="Neuf")


def test_universe_with_rayons_cannot_be_hard_deleted():
    universe = store_zones.create_universe(label="Plein")
    store_zones.create_rayon(universe_id=universe.id, label="Rayon")
    with pytest.raises(Conflict) as refused:
        store_zones.delete_universe(universe.id)
    assert refused.value.details == {"referencedBy": {"rayons": 1}}


def test_unreferenced_zones_are_hard_deleted():
    universe = store_zones.create_universe(label="Vide")
    rayon = store_zones.create_rayon(universe_id=universe.id, label="Seul")
    store_zones.delete_rayon(rayon.id)
    store_zones.delete_universe(universe.id)
    with pytest.raises(NotFound):
        store_zones.delete_universe(universe.id)


def test_migration_032_folds_the_ligatures_of_labels_stored_before():
    import importlib

    from backend.db import database
    from backend.marketplace.models import Universe

    migration = importlib.import_module("backend.migrations.032_zone_label_ligatures")
    old = store_zones.create_universe(label="Œufs frais")
    Universe.update(normalized_label="œufs frais").where(Universe.id == old.id).execute()  # the former rule

    class Migrator:
        @staticmethod
        def sql(statement):
            database.execute_sql(statement)

    migration.migrate(Migrator, database)
    assert Universe.get_by_id(old.id).normalized_label == "oeufs frais"
    with pytest.raises(Conflict):
        store_zones.create_universe(label="Oeufs frais")
