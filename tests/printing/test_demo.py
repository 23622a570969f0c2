"""`vitrine seed-demo`: the printing demo data (deposits and orders in every status), seeded once."""

from collections import Counter

from backend.marketplace.models import Campaign, Reservation
from backend.printing.models import PrintAsset, PrintOrder
from backend.runtime import current_runtime
from ops.seed import seed_demo


def test_demo_printing_has_orders_in_every_status_and_is_seeded_once():
    seed_demo(current_runtime())
    orders_before = PrintOrder.select().count()
    seed_demo(current_runtime())
    assert PrintOrder.select().count() == orders_before == 6
    statuses = Counter(o.status for o in PrintOrder.select())
    assert statuses == Counter(["draft", "pending", "sent", "in_production", "produced", "delivered"])
    delivered = PrintOrder.get(PrintOrder.status == "delivered")
    assert delivered.carrier == "Geodis" and delivered.tracking_number
    winter = Reservation.select().join(Campaign).where(Campaign.name == "Raclette d'hiver")
    deposits = Counter(r.impression_status for r in winter)
    assert deposits == Counter({"validated": 1, "locked": 4, "to_deposit": 1, "in_stock": 1, "in_review": 1})
    assert PrintAsset.select().count() == 1
    cheese = Reservation.select().join(Campaign).where(Campaign.name == "Fête des fromages")
    assert len(cheese) == 20 and {r.impression_status for r in cheese} == {"to_deposit"}
    assert len({r.furniture_type_version_id for r in cheese}) == 1  # one furniture group: one batch
