"""Marketplace fixtures: organizations at a KYB status, a zone tree, a furniture type, a store
with ad spaces, a campaign. Each returns a callable with valid defaults."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from backend.identity.models import Organization
from backend.marketplace import campaigns, cart, catalog, furniture, store_zones
from backend.marketplace.furniture import ZoneSpec
from tests.factories import make_organization

RATE_BPS = 2000
JUNE = (datetime(2026, 6, 1, tzinfo=UTC), datetime(2026, 6, 30, tzinfo=UTC))


@pytest.fixture
def make_org():
    """`make_organization`, approved by default: most marketplace tests need a KYB-approved party."""

    def make(actor_type: str = "industrial", kyb_status: str | None = "approved") -> Organization:
        return make_organization(actor_type, kyb_status=kyb_status)

    return make


@pytest.fixture
def zones():
    universe = store_zones.create_universe(label="Épicerie salée")
    rayon = store_zones.create_rayon(universe_id=universe.id, label="Conserves")
    return universe, rayon


@pytest.fixture
def furniture_type():
    zone = ZoneSpec(code="front", label="Fronton", face_quantity=2, printable=True, width_mm=1200, height_mm=300)
    return furniture.create_furniture_type(name="Tête de gondole", zones=[zone])


@pytest.fixture
def make_ad_space(make_org, zones, furniture_type):
    """An ad space of a (new, by default) approved distributor's store."""
    universe, rayon = zones

    def make(price_cents: int = 10_000, distributor: Organization | None = None, city: str = "Lyon"):
        distributor = distributor or make_org("distributor")
        store = catalog.create_store(organization_id=distributor.id, name=f"Magasin {city}", street="1 rue Neuve",
                                     postal_code="69001", city=city, country="FR")
        return catalog.publish_ad_space(
            organization_id=distributor.id, store_id=store.id, name="Gondole 1",
            promo_furniture_type_id=furniture_type.furniture_type_id, placement_universe_id=universe.id,
            placement_rayon_id=rayon.id, price_cents=price_cents,
        )

    return make


@pytest.fixture
def make_campaign():
    def make(industrial: Organization, dates=JUNE, **kwargs):
        return campaigns.create_campaign(organization_id=industrial.id, name="Été", starts_at=dates[0],
                                         ends_at=dates[1], **kwargs)

    return make


def add_to_cart(organization_id: str, campaign_id: str, ad_space_id: str):
    return cart.add_cart_item(organization_id=organization_id, campaign_id=campaign_id, ad_space_id=ad_space_id,
                              user_id=None, rate_bps=RATE_BPS)
