"""Ad-space search (filters, one statement per page), reservation lists, creation timestamps, and
the store-zone tree every signed-in user reads."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from backend import clock
from backend.errors import Forbidden, NotFound, ValidationError
from backend.identity.models import Organization
from backend.listing import ListParams
from backend.marketplace import cart, catalog, reservations, store_zones
from backend.marketplace.reservations import Review
from schemas.marketplace.catalog import AdSpaceOut
from schemas.marketplace.reservations import ReservationOut
from tests.factories import add_member, make_organization, make_user, signed_in
from tests.marketplace.conftest import RATE_BPS, add_to_cart
from tests.support import sql_statements


def test_search_filters_by_universe_rayon_city_and_distributor(make_org, make_ad_space, zones):
    universe, rayon = zones
    other_universe = store_zones.create_universe(label="Boissons")
    mine = make_org("distributor")
    lyon = make_ad_space(distributor=mine, city="Lyon")
    paris = make_ad_space(distributor=mine, city="Paris")
    elsewhere = make_ad_space(city="Lyon")

    def found(**filters):
        return {s.id for s in catalog.search_ad_spaces(params=ListParams(page_size=100), **filters).items}

    assert {lyon.id, paris.id, elsewhere.id} <= found(universe_id=universe.id)
    assert found(universe_id=other_universe.id) == set()
    assert found(rayon_id=rayon.id, city=" LYON ") >= {lyon.id, elsewhere.id}
    assert paris.id not in found(rayon_id=rayon.id, city="lyon")
    assert found(organization_id=mine.id) == {lyon.id, paris.id}
    assert found(organization_id=mine.id, city="paris") == {paris.id}


def test_a_search_page_and_a_reservation_page_are_one_statement_each(make_org, make_ad_space, make_campaign):
    industrial = make_org("industrial")
    campaign = make_campaign(industrial)
    for price in (100, 200, 300):
        add_to_cart(industrial.id, campaign.id, make_ad_space(price).id)
    cart.checkout(organization_id=industrial.id, user_id=None, rate_bps=RATE_BPS)

    with sql_statements() as seen:
        page = catalog.search_ad_spaces(params=ListParams(page_size=2, search="gondole"))
        dumped = [AdSpaceOut().dump(item) for item in page.items]
    assert len(seen) == 1 and len(dumped) == 2 and page.total >= 3
    assert all(item["store"]["name"] for item in dumped)

    with sql_statements() as seen:
        page = reservations.list_reservations(organization_id=industrial.id,
                                              params=ListParams(page_size=2, sort_by="totalAmountCents"))
        dumped = ReservationOut(many=True).dump(page.items)
    assert len(seen) == 1 and page.total == 3
    assert [r["netDistributorAmountCents"] for r in dumped] == [100, 200]
    assert all(r["adSpace"]["store"]["name"] and r["campaignName"] for r in dumped)


def test_created_rows_carry_their_creation_time_at_once(make_org, make_ad_space, make_campaign):
    moment = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
    with clock.frozen_at(moment):
        universe = store_zones.create_universe(label="Horodaté")
        space = make_ad_space()
        campaign = make_campaign(make_org("industrial"))
    assert universe.created_at == space.created_at == space.store.created_at == campaign.created_at == moment
    assert AdSpaceOut().dump(space)["createdAt"] == "2026-03-02T09:30:00.000Z"


def test_every_signed_in_user_reads_the_active_zone_tree(client):
    kept = store_zones.create_universe(label="Crèmerie")
    yaourts = store_zones.create_rayon(universe_id=kept.id, label="Yaourts")
    old = store_zones.create_rayon(universe_id=kept.id, label="Lait en poudre")
    store_zones.update_rayon(old.id, archived=True)
    gone = store_zones.create_universe(label="Saison passée")
    store_zones.update_universe(gone.id, archived=True)

    assert client.simulate_get("/api/store-zones").status_code == 401
    distributor = make_organization("distributor", kyb_status="approved")
    user = make_user()
    add_member(user, distributor)
    answer = client.simulate_get("/api/store-zones", headers=signed_in(user, distributor))
    assert answer.status_code == 200
    tree = {u["id"]: u for u in answer.json["data"]["universes"]}
    assert gone.id not in tree
    assert [(r["id"], r["code"]) for r in tree[kept.id]["rayons"]] == [(yaourts.id, "RAYON_YAOURTS")]
    assert all(u["archivedAt"] is None for u in tree.values())


def test_publication_checks_kyb_store_and_placement(make_org, zones, furniture_type):
    universe, rayon = zones
    distributor = make_org("distributor")
    store = catalog.create_store(organization_id=distributor.id, name="Magasin", street="1 rue", postal_code="69001",
                                 city="Lyon", country="fr")
    other_universe = store_zones.create_universe(label="Boissons")
    archived = store_zones.create_universe(label="Ancien univers")
    store_zones.update_universe(archived.id, archived=True)

    def publish(organization_id=distributor.id, **overrides):
        fields = {"store_id": store.id, "name": " Gondole ", "placement_universe_id": universe.id,
                  "promo_furniture_type_id": furniture_type.furniture_type_id, "placement_rayon_id": rayon.id,
                  "price_cents": 100}
        return catalog.publish_ad_space(organization_id=organization_id, **{**fields, **overrides})

    pending = make_org("distributor", kyb_status="submitted")
    with pytest.raises(Forbidden) as refused:
        publish(organization_id=pending.id)
    assert refused.value.details == {"reason": "kyb_not_approved"}
    with pytest.raises(NotFound):
        publish(organization_id=make_org("distributor").id)  # not one of its stores
    invalid_placements = (
        ({"placement_universe_id": archived.id, "placement_rayon_id": None}, "placementUniverseId"),
        ({"placement_universe_id": other_universe.id}, "placementRayonId"),  # the rayon is not in it
        ({"promo_furniture_type_id": "no-such-type"}, "promoFurnitureTypeId"),
    )
    for overrides, field in invalid_placements:
        with pytest.raises(ValidationError) as invalid:
            publish(**overrides)
        assert field in invalid.value.details["fields"]
    published = publish(placement_rayon_id=None)
    assert (published.name, published.store.country, published.placement_rayon_id) == ("Gondole", "FR", None)


def test_accepting_a_counter_proposal_needs_an_approved_kyb(make_org, make_ad_space, make_campaign):
    industrial = make_org("industrial")
    add_to_cart(industrial.id, make_campaign(industrial).id, make_ad_space().id)
    (reservation,) = cart.checkout(organization_id=industrial.id, user_id=None, rate_bps=RATE_BPS)
    reservations.review_reservation(reservation_id=reservation.id, decision=Review.COUNTER_PROPOSAL, price_cents=50,
                                    distributor_organization_id=reservation.distributor_organization_id)
    Organization.update(kyb_status="rejected").where(Organization.id == industrial.id).execute()
    with pytest.raises(Forbidden) as refused:
        reservations.accept_counter_proposal(reservation_id=reservation.id, industrial_organization_id=industrial.id,
                                             rate_bps=RATE_BPS)
    assert refused.value.details == {"reason": "kyb_not_approved"}
