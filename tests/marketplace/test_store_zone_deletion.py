"""Hard deletion of store zones: every 409 case of Specification A."""

import pytest

from backend.errors import Conflict
from backend.marketplace import store_zones


def test_universe_placed_by_an_ad_space_cannot_be_deleted(make_ad_space, zones):
    universe, _ = zones
    make_ad_space()
    with pytest.raises(Conflict) as refused:
        store_zones.delete_universe(universe.id)
    assert refused.value.details == {"referencedBy": {"rayons": 1, "adSpaces": 1}}


def test_rayon_placed_by_an_ad_space_cannot_be_deleted(make_ad_space, zones):
    make_ad_space()
    with pytest.raises(Conflict) as refused:
        store_zones.delete_rayon(zones[1].id)
    assert refused.value.details == {"referencedBy": {"adSpaces": 1}}


def test_universe_targeted_by_a_campaign_cannot_be_deleted(make_org, make_campaign):
    universe = store_zones.create_universe(label="Ciblé")
    make_campaign(make_org("industrial"), universe_ids=[universe.id])
    with pytest.raises(Conflict) as refused:
        store_zones.delete_universe(universe.id)
    assert refused.value.details == {"referencedBy": {"campaigns": 1}}


def test_rayon_targeted_by_a_campaign_cannot_be_deleted(make_org, make_campaign, zones):
    _, rayon = zones
    make_campaign(make_org("industrial"), rayon_ids=[rayon.id, "anything-unconstrained"])
    with pytest.raises(Conflict) as refused:
        store_zones.delete_rayon(rayon.id)
    assert refused.value.details == {"referencedBy": {"campaigns": 1}}


def test_universe_with_rayons_cannot_be_deleted_even_when_archived(zones):
    universe, _ = zones
    store_zones.update_universe(universe.id, archived=True)
    with pytest.raises(Conflict) as refused:
        store_zones.delete_universe(universe.id)
    assert refused.value.details == {"referencedBy": {"rayons": 1}}
