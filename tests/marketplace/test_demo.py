"""`vitrine seed-demo`: the marketplace demo data, seeded twice without duplicates."""

from backend.marketplace.models import AdSpace, Campaign, Rayon, Reservation, Store, Universe
from backend.runtime import current_runtime
from ops.seed import seed_demo


def _counts():
    return [m.select().count() for m in (Universe, Rayon, Store, AdSpace, Campaign, Reservation)]


def test_demo_marketplace_is_seeded_once_with_reservations_in_several_statuses():
    seed_demo(current_runtime())
    first = _counts()
    seed_demo(current_runtime())
    assert _counts() == first
    assert first[:4] == [13, 24, 20, 40]
    spring = Reservation.select().join(Campaign).where(Campaign.name == "Printemps des laitages")
    statuses = sorted(r.status for r in spring)
    assert statuses == ["approved", "approved", "counter_proposed", "pending_review", "rejected"]
    assert Universe.get(Universe.code == "UNIV_EPICERIE_SALEE").label == "Épicerie salée"
