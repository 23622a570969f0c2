"""The ad-space search's written-out statement: sorts, pages and totals, literal search patterns,
and the search rows answered exactly as marshmallow's field-by-field dump of the same ad space."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from backend import clock
from backend.errors import ValidationError
from backend.listing import ListParams
from backend.marketplace import catalog
from schemas.common import page_of
from schemas.marketplace.catalog import AdSpaceOut, AdSpacePage, StoreOut
from tests.support import sql_statements

# name, price, city, minutes after the first creation
SPACES = (("Bravo", 300, "Lyon", 3), ("Alpha", 100, "Paris", 1), ("Charlie", 200, "Lyon", 0),
          ("Delta", 200, "Nice", 4), ("Echo", 500, "Angers", 2))


@pytest.fixture
def distributor_spaces(make_org, zones, furniture_type):
    """SPACES published in a distributor's stores (one store per space, named after the space)."""
    universe, rayon = zones
    distributor = make_org("distributor")
    began = datetime(2026, 2, 1, tzinfo=UTC)
    published = {}
    for name, price, city, minutes in SPACES:
        with clock.frozen_at(began + timedelta(minutes=minutes)):
            store = catalog.create_store(organization_id=distributor.id, name=f"Magasin {name}", street="1 rue",
                                         postal_code="69001", city=city, country="FR")
            published[name] = catalog.publish_ad_space(
                organization_id=distributor.id, store_id=store.id, name=name,
                promo_furniture_type_id=furniture_type.furniture_type_id, placement_universe_id=universe.id,
                placement_rayon_id=rayon.id if price != 500 else None, price_cents=price,
            )
    return distributor, published


def test_search_sorts_by_each_whitelisted_column_both_ways_with_id_as_tiebreaker(distributor_spaces):
    distributor, published = distributor_spaces
    by_id = {space.id: name for name, space in published.items()}

    def names(sort_by=None, sort_dir="asc"):
        page = catalog.search_ad_spaces(params=ListParams(sort_by=sort_by, sort_dir=sort_dir, page_size=100),
                                        organization_id=distributor.id)
        return [by_id[item.id] for item in page.items]

    def expected(key, reverse=False):
        ordered = sorted(SPACES, key=lambda s: (key(s), published[s[0]].id), reverse=reverse)
        return [s[0] for s in ordered]

    assert names() == expected(lambda s: s[3])
    assert names("createdAt", "desc") == expected(lambda s: s[3], reverse=True)
    assert names("name") == expected(lambda s: s[0])
    assert names("name", "desc") == expected(lambda s: s[0], reverse=True)
    assert names("priceCents") == expected(lambda s: s[1])
    assert names("priceCents", "desc") == expected(lambda s: s[1], reverse=True)
    assert names("city") == expected(lambda s: s[2])
    assert names("city", "desc") == expected(lambda s: s[2], reverse=True)
    with pytest.raises(ValidationError) as refused:
        names("price_cents")
    assert "sortBy" in refused.value.details["fields"]


def test_search_pages_carry_the_total_and_past_the_last_page_the_total_still(distributor_spaces):
    distributor, published = distributor_spaces

    def page(number, size=2, **filters):
        return catalog.search_ad_spaces(params=ListParams(page=number, page_size=size, sort_by="priceCents"),
                                        organization_id=distributor.id, **filters)

    first, last, beyond = page(1), page(3), page(4)
    assert [item.price_cents for item in first.items] == [100, 200] and first.total == 5
    assert [item.price_cents for item in last.items] == [500] and last.total == 5
    with sql_statements() as seen:
        beyond = page(4)
    assert (beyond.items, beyond.total, beyond.page, beyond.page_size) == ([], 5, 4, 2)
    assert len(seen) == 2  # the page, then the count its window could not give
    empty = page(1, city="Marseille")
    assert (empty.items, empty.total) == ([], 0)
    assert page(1, size=10, city=" LYON ").total == 2
    assert page(1, size=10, rayon_id=published["Bravo"].placement_rayon_id, city="angers").total == 0


def test_search_text_is_matched_literally_in_ad_space_and_store_names(make_org, zones, furniture_type):
    universe, _ = zones
    distributor = make_org("distributor")
    store = catalog.create_store(organization_id=distributor.id, name="Magasin 100% local", street="1 rue",
                                 postal_code="69001", city="Lyon", country="FR")
    for name in ("Vitrine_A", "VitrineXA", "Allée 1"):
        catalog.publish_ad_space(organization_id=distributor.id, store_id=store.id, name=name,
                                 promo_furniture_type_id=furniture_type.furniture_type_id,
                                 placement_universe_id=universe.id, placement_rayon_id=None, price_cents=1)

    def found(search):
        page = catalog.search_ad_spaces(params=ListParams(search=search, page_size=100),
                                        organization_id=distributor.id)
        return sorted(item.name for item in page.items)

    assert found("e_a") == ["Vitrine_A"]  # `_` is not a wildcard
    assert found("100%") == sorted(["Allée 1", "Vitrine_A", "VitrineXA"])  # in the store's name, `%` literal
    assert found("0% l") == sorted(["Allée 1", "Vitrine_A", "VitrineXA"])
    assert found("10%0") == []
    assert found("vitrinexa") == ["VitrineXA"]  # ignoring case


def test_search_rows_and_models_answer_exactly_as_the_field_by_field_dump(distributor_spaces):
    distributor, published = distributor_spaces
    page = catalog.search_ad_spaces(params=ListParams(page_size=100), organization_id=distributor.id)
    assert len(page.items) == len(SPACES)
    schema, store_schema = AdSpaceOut(), StoreOut()
    for row in page.items:
        assert schema.dump(row) == schema.dump_field_by_field(row)
        model = catalog.ad_space(row.id)
        assert schema.dump(row) == schema.dump(model) == schema.dump_field_by_field(model)  # as the model
        assert store_schema.dump(row.store) == store_schema.dump_field_by_field(row.store)
        assert store_schema.dump(model.store) == store_schema.dump_field_by_field(model.store)
    rayonless = published["Echo"]
    assert schema.dump(rayonless) == schema.dump_field_by_field(rayonless)
    assert schema.dump(rayonless)["placementRayonId"] is None
    assert schema.dump(rayonless)["store"]["address"] == {"street": "1 rue", "postalCode": "69001",
                                                         "city": "Angers", "country": "FR"}
    answered = AdSpacePage().dump(page)
    assert answered == page_of(AdSpaceOut)().dump(page)  # the field-by-field page
    assert answered["items"] == [schema.dump_field_by_field(row) for row in page.items]
    assert (answered["total"], answered["page"], answered["pageSize"]) == (5, 1, 100)
    assert AdSpaceOut(many=True).dump(page.items) == answered["items"]
    assert AdSpaceOut(only=("id",)).dump(page.items[0]) == {"id": page.items[0].id}
