"""Furniture types: zones, and versions that never rewrite what was frozen."""

import pytest

from backend.errors import ValidationError
from backend.marketplace import furniture
from backend.marketplace.furniture import ZoneSpec
from backend.marketplace.models import FurnitureTypeVersion, FurnitureZone
from tests.factories import add_member, make_admin, make_organization, make_user, signed_in

FRONT = ZoneSpec(code="front", label="Fronton", face_quantity=2, printable=True, width_mm=1200, height_mm=300)
SIDE = ZoneSpec(code="side", label="Joue", face_quantity=2, printable=True, width_mm=400, height_mm=1600)



def _frozen_version(version_id: str) -> FurnitureTypeVersion:
    """The configuration a reservation was sold with, as stored, with its zones in order."""
    version = FurnitureTypeVersion.get_by_id(version_id)
    version.zone_list = list(FurnitureZone.select().where(FurnitureZone.furniture_type_version == version_id)
                             .order_by(FurnitureZone.position))
    return version

def test_created_type_has_its_zones_in_order():
    created = furniture.create_furniture_type(name="Tête de gondole", zones=[FRONT, SIDE])
    current = furniture.current_version(created.furniture_type_id)
    assert current.version == 1 and current.name == "Tête de gondole"
    assert [(z.code, z.face_quantity, z.width_mm) for z in current.zone_list] == [("front", 2, 1200),
                                                                                  ("side", 2, 400)]


def test_revision_is_a_new_version_and_the_old_one_is_unchanged():
    first = furniture.create_furniture_type(name="Box", zones=[FRONT])
    second = furniture.revise_furniture_type(
        first.furniture_type_id, name="Box XL", zones=[ZoneSpec(**{**vars(FRONT), "face_quantity": 4})]
    )
    assert second.version == 2
    old = _frozen_version(first.id)
    assert old.name == "Box" and [z.face_quantity for z in old.zone_list] == [2]
    assert furniture.current_version(first.furniture_type_id).id == second.id


def test_editing_a_type_after_checkout_keeps_the_reservations_configuration(make_org, make_ad_space, make_campaign):
    from backend.marketplace import cart
    from tests.marketplace.conftest import RATE_BPS, add_to_cart

    industrial = make_org("industrial")
    space = make_ad_space()
    add_to_cart(industrial.id, make_campaign(industrial).id, space.id)
    (reservation,) = cart.checkout(organization_id=industrial.id, user_id=None, rate_bps=RATE_BPS)
    sold = furniture.current_version(space.promo_furniture_type_id)
    furniture.revise_furniture_type(space.promo_furniture_type_id, name="Tête de gondole XL",
                                    zones=[ZoneSpec(**{**vars(FRONT), "face_quantity": 6})])
    frozen = _frozen_version(reservation.furniture_type_version_id)
    assert frozen.id == sold.id and frozen.name == "Tête de gondole"
    assert [(z.id, z.face_quantity) for z in frozen.zone_list] == [(z.id, z.face_quantity) for z in sold.zone_list]
    assert furniture.current_version(space.promo_furniture_type_id).zone_list[0].face_quantity == 6


def test_duplicate_zone_codes_are_refused():
    with pytest.raises(ValidationError):
        furniture.create_furniture_type(name="Double", zones=[FRONT, FRONT])


def test_printer_must_be_a_printer_organization():
    with pytest.raises(ValidationError):
        furniture.create_furniture_type(name="X", zones=[FRONT], printer_organization_id="industrial:552100554")


def test_furniture_types_over_http(client):
    admin = signed_in(make_admin())
    body = {"name": "Présentoir", "zones": [{"code": "top", "label": "Haut", "faceQuantity": 1, "printable": True,
                                             "widthMm": 600, "heightMm": 200}]}
    created = client.simulate_post("/api/admin/furniture-types", headers=admin, json=body).json["data"]["furnitureType"]
    body["zones"][0]["faceQuantity"] = 3
    revised = client.simulate_put(f"/api/admin/furniture-types/{created['id']}", headers=admin, json=body)
    assert revised.json["data"]["furnitureType"]["version"] == 2
    distributor = make_user()
    organization = make_organization("distributor", kyb_status="approved")
    add_member(distributor, organization, "manager")
    listed = client.simulate_get("/api/furniture-types", headers=signed_in(distributor, organization),
                                 params={"search": "présentoir"}).json["data"]
    assert [(t["id"], t["version"], t["zones"][0]["faceQuantity"]) for t in listed["items"]] == [(created["id"], 2, 3)]
    bad = client.simulate_post("/api/admin/furniture-types", headers=admin, json={"name": "X", "zones": []})
    assert bad.status_code == 400 and bad.json["error"]["code"] == "VALIDATION_ERROR"
