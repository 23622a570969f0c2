"""Marketplace demo data of `vitrine seed-demo`: the store-zone tree, two furniture types, 20
stores of the demo distributor with their ad spaces, a campaign of the demo industrial and a few
reservations in different statuses. Runs after the identity seeder (its organizations) and is
idempotent: zones and types are found again by label and name, and the catalog, campaign and
reservations are only created while the demo distributor has no store yet."""

from __future__ import annotations

from datetime import UTC, datetime

from backend.marketplace import campaigns, cart, catalog, furniture, reservations, store_zones
from backend.marketplace.furniture import ZoneSpec
from backend.marketplace.models import FurnitureTypeVersion, Rayon, Store, Universe
from backend.marketplace.naming import normalize_label
from backend.marketplace.reservations import Review

INDUSTRIAL = "industrial:552100554"
DISTRIBUTOR = "distributor:385347927"
# (universe, transversal, rayons)
ZONE_TREE = (
    ("Épicerie salée", False, ("Conserves", "Pâtes & riz", "Condiments")),
    ("Épicerie sucrée", False, ("Biscuits", "Confiserie", "Petit-déjeuner")),
    ("Crèmerie", False, ("Yaourts", "Fromages", "Œufs")),
    ("Boissons", False, ("Eaux", "Jus de fruits", "Sodas")),
    ("Fruits & légumes", False, ("Fruits", "Légumes")),
    ("Boucherie-Volaille", False, ("Volaille", "Bœuf")),
    ("Surgelés", False, ("Glaces", "Plats cuisinés")),
    ("Hygiène-Beauté", False, ("Soins du visage", "Hygiène dentaire")),
    ("Entretien", False, ("Lessive", "Vaisselle")),
    ("Bébé", False, ("Couches", "Petits pots")),
    ("Promotions", True, ()),
    ("Bio", True, ()),
    ("Marque distributeur", True, ()),
)
FURNITURE = (
    ("Tête de gondole", (ZoneSpec("fronton", "Fronton", 1, True, 1200, 300),
                         ZoneSpec("joue", "Joues", 2, True, 400, 1600))),
    ("Box réfrigéré", (ZoneSpec("couvercle", "Couvercle", 1, True, 1800, 600),
                       ZoneSpec("facade", "Façade", 4, True, 900, 450),
                       ZoneSpec("socle", "Socle", 1, False, 1800, 150))),
)
# (city, postal code)
CITIES = (("Paris", "75011"), ("Lyon", "69003"), ("Marseille", "13008"), ("Toulouse", "31000"),
          ("Nice", "06000"), ("Nantes", "44000"), ("Strasbourg", "67000"), ("Montpellier", "34000"),
          ("Bordeaux", "33000"),
          ("Lille", "59000"), ("Rennes", "35000"), ("Reims", "51100"), ("Le Havre", "76600"),
          ("Saint-Étienne", "42000"), ("Toulon", "83000"), ("Grenoble", "38000"), ("Dijon", "21000"),
          ("Angers", "49000"), ("Nîmes", "30000"), ("Besançon", "25000"))


def seed_demo_marketplace(*, rate_bps: int) -> str:
    """The demo catalog and campaigns; `rate_bps` is the platform's commission rate."""
    universes = [_universe(label, transversal, rayons) for label, transversal, rayons in ZONE_TREE]
    types = [_furniture_type(name, zones) for name, zones in FURNITURE]
    if Store.select().where(Store.organization_id == DISTRIBUTOR).exists():
        return f"{len(universes)} universes and {len(types)} furniture types present; catalog already seeded"
    spaces = []
    for n, (city, postal_code) in enumerate(CITIES):
        store = catalog.create_store(organization_id=DISTRIBUTOR, name=f"Hyper Démo {city}", street=f"{n + 1} avenue "
                                     "de la République", postal_code=postal_code, city=city,
                                     country="FR")
        for m, (universe, rayon) in enumerate(((universes[n % 10], 0), (universes[(n + 3) % 10], 1))):
            spaces.append(catalog.publish_ad_space(
                organization_id=DISTRIBUTOR, store_id=store.id, name=f"{types[m].name} {universe.label}",
                promo_furniture_type_id=types[m].furniture_type_id, placement_universe_id=universe.id,
                placement_rayon_id=universe.rayon_list[rayon].id, price_cents=15_000 + 2_475 * n + 999 * m,
            ))
    campaign = campaigns.create_campaign(
        organization_id=INDUSTRIAL, name="Printemps des laitages", starts_at=datetime(2027, 3, 1, tzinfo=UTC),
        ends_at=datetime(2027, 3, 31, tzinfo=UTC), universe_ids=[universes[2].id], rayon_ids=[],
    )
    for space in spaces[:5]:
        cart.add_cart_item(organization_id=INDUSTRIAL, campaign_id=campaign.id, ad_space_id=space.id, user_id=None,
                           rate_bps=rate_bps)
    booked = cart.checkout(organization_id=INDUSTRIAL, user_id=None, rate_bps=rate_bps)
    decisions = ((Review.APPROVED, None), (Review.REJECTED, None), (Review.COUNTER_PROPOSAL, 12_000),
                 (Review.COUNTER_PROPOSAL, 9_900))
    for reservation, (decision, price) in zip(booked, decisions, strict=False):
        reservations.review_reservation(reservation_id=reservation.id, distributor_organization_id=DISTRIBUTOR,
                                        decision=decision, price_cents=price)
    reservations.accept_counter_proposal(reservation_id=booked[3].id, industrial_organization_id=INDUSTRIAL,
                                         rate_bps=rate_bps)
    return (f"{len(universes)} universes, {len(types)} furniture types, {len(CITIES)} stores, {len(spaces)} ad "
            f"spaces, 1 campaign, {len(booked)} reservations (approved, rejected, counter-proposed, accepted, "
            "pending)")


def _universe(label: str, transversal: bool, rayons: tuple[str, ...]) -> Universe:
    universe = Universe.get_or_none(Universe.normalized_label == normalize_label(label))
    universe = universe or store_zones.create_universe(label=label, is_transversal=transversal)
    existing = {r.normalized_label: r for r in Rayon.select().where(Rayon.universe == universe.id)}
    universe.rayon_list = [
        existing.get(normalize_label(name)) or store_zones.create_rayon(universe_id=universe.id, label=name)
        for name in rayons
    ]
    return universe


def _furniture_type(name: str, zones: tuple[ZoneSpec, ...]) -> FurnitureTypeVersion:
    found = FurnitureTypeVersion.get_or_none(FurnitureTypeVersion.name == name, FurnitureTypeVersion.version == 1)
    return found or furniture.create_furniture_type(name=name, zones=zones)
