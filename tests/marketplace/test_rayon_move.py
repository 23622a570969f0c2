"""Moving a rayon to another universe moves the ad spaces placed in it: searches by universe
find them under the new one, and the database keeps an ad space's universe that of its rayon."""

import pytest
from peewee import IntegrityError

from backend.db import transaction
from backend.listing import ListParams
from backend.marketplace import catalog, store_zones
from backend.marketplace.models import AdSpace


def _found(**filters) -> set[str]:
    return {s.id for s in catalog.search_ad_spaces(params=ListParams(page_size=100), **filters).items}


def test_moving_a_rayon_moves_its_ad_spaces_to_the_new_universe(make_ad_space, zones):
    universe, rayon = zones
    placed = make_ad_space()
    target = store_zones.create_universe(label="Frais libre-service")
    store_zones.update_rayon(rayon.id, universe_id=target.id)
    assert AdSpace.get_by_id(placed.id).placement_universe_id == target.id
    assert placed.id in _found(universe_id=target.id)
    assert placed.id not in _found(universe_id=universe.id)


def test_the_database_refuses_an_ad_space_outside_its_rayons_universe(make_ad_space):
    placed = make_ad_space()
    other = store_zones.create_universe(label="Hygiène")
    with pytest.raises(IntegrityError), transaction():
        AdSpace.update(placement_universe=other.id).where(AdSpace.id == placed.id).execute()
