"""An order is made from the furniture type as it is when the order is created (spec B freezes
quantities at order time; API.md resolves the printer then), not from the version of checkout."""

from __future__ import annotations

from backend.marketplace.models import FurnitureType, FurnitureTypeVersion, FurnitureZone
from backend.printing.models import PrintOrder, PrintOrderLine
from tests.factories import make_organization
from tests.printing.helpers import attach, confirm, upload


def test_a_deposit_uses_the_furniture_type_as_it_is_now(client, member, setting):
    reservation = setting.reservation()  # sold on version 1
    new_printer = make_organization("printer")
    version = FurnitureTypeVersion.create(furniture_type=setting.version.furniture_type, version=2,
                                          name="Tête de gondole XL", printer_organization_id=new_printer.id)
    fronton = FurnitureZone.create(furniture_type_version=version, position=0, code="FRONTON", label="Fronton",
                                   face_quantity=3, printable=True, width_mm=1000, height_mm=300)
    FurnitureType.update(current_version=2).where(FurnitureType.id == version.furniture_type_id).execute()

    gabarits = client.simulate_get(f"/api/reservations/{reservation.id}/gabarits", headers=member)
    assert [z["id"] for z in gabarits.json["data"]["zones"]] == [fronton.id], gabarits.json
    asset = upload(client, member)
    assert attach(client, member, reservation.id, fronton.id, None, asset).status_code == 201
    deposit = confirm(client, member, reservation.id, [(fronton.id, None)])
    assert deposit.status_code == 200, deposit.json
    order = PrintOrder.get(PrintOrder.code == deposit.json["data"]["printOrder"]["code"])
    assert order.printer_organization_id == new_printer.id
    (line,) = PrintOrderLine.select().where(PrintOrderLine.order == order.id)
    assert (line.zone_id, line.quantity) == (fronton.id, 3)


def test_a_batch_makes_its_orders_from_the_furniture_type_as_it_is_now(client, member, setting):
    sold = [setting.reservation() for _ in range(2)]  # sold on version 1
    opened = client.simulate_post("/api/print-batches", headers=member, json={
        "campaignId": setting.campaign.id, "promoFurnitureTypeId": setting.version.furniture_type_id})
    batch_id = opened.json["data"]["batch"]["id"]
    new_printer = make_organization("printer")
    version = FurnitureTypeVersion.create(furniture_type=setting.version.furniture_type, version=2,
                                          name="Tête de gondole XL", printer_organization_id=new_printer.id)
    fronton = FurnitureZone.create(furniture_type_version=version, position=0, code="FRONTON", label="Fronton",
                                   face_quantity=3, printable=True, width_mm=1000, height_mm=300)
    FurnitureType.update(current_version=2).where(FurnitureType.id == version.furniture_type_id).execute()

    batch = client.simulate_get(f"/api/print-batches/{batch_id}", headers=member).json["data"]["batch"]
    assert [z["id"] for z in batch["zones"]] == [fronton.id]
    asset = upload(client, member)
    attached = client.simulate_post(f"/api/print-batches/{batch_id}/upload/preflight-from-asset", headers=member,
                                    json={"zoneId": fronton.id, "faceIndex": None, "assetId": asset})
    assert attached.status_code == 201, attached.json
    confirmed = client.simulate_post(f"/api/print-batches/{batch_id}/confirm", headers=member, json={
        "reservationIds": [r.id for r in sold], "delivery": {"target": "store"}})
    assert confirmed.status_code == 201, confirmed.json
    orders = list(PrintOrder.select().where(PrintOrder.batch_id == batch_id))
    assert len(orders) == 2 and {o.printer_organization_id for o in orders} == {new_printer.id}
    lines = PrintOrderLine.select().where(PrintOrderLine.order.in_([o.id for o in orders]))
    assert {(line.zone_id, line.quantity) for line in lines} == {(fronton.id, 3)}
