"""Spec B resources: the batch carries its `orders` and `preflights`, and every order view shows
`batchId`, the only link between a batch and its orders."""

from __future__ import annotations

from backend.printing.models import PrintOrderBatch
from tests.factories import make_admin, signed_in


def test_the_batch_detail_has_its_orders_and_preflights(client, member, setting, group):
    batch_id, ids = group(2)
    draft = client.simulate_get(f"/api/print-batches/{batch_id}", headers=member).json["data"]["batch"]
    assert draft["orders"] == []
    assert sorted(p["zoneId"] for p in draft["preflights"]) == sorted(z.id for z in setting.zones)
    assert all(p["faceIndex"] is None and p["appliesToAllQualifiers"] for p in draft["preflights"])

    confirmed = client.simulate_post(f"/api/print-batches/{batch_id}/confirm", headers=member, json={
        "reservationIds": ids, "delivery": {"target": "store"}})
    assert confirmed.status_code == 201
    batch = client.simulate_get(f"/api/print-batches/{batch_id}", headers=member).json["data"]["batch"]
    assert sorted(o["reservationId"] for o in batch["orders"]) == sorted(ids)
    code = PrintOrderBatch.get_by_id(batch_id).code
    for order in batch["orders"]:
        assert (order["batchId"], order["batchCode"], order["status"]) == (batch_id, code, "pending")
        assert order["panelCount"] == 6 and all("qualifiers" not in line for line in order["lines"])
    assert len(batch["preflights"]) == 2


def test_every_order_view_shows_its_batch_id(client, member, printer, group):
    batch_id, ids = group(1)
    client.simulate_post(f"/api/print-batches/{batch_id}/confirm", headers=member, json={
        "reservationIds": ids, "delivery": {"target": "store"}})
    (item,) = client.simulate_get("/api/printer/print-orders", headers=printer).json["data"]["orders"]
    assert item["batchId"] == batch_id
    detail = client.simulate_get(f"/api/printer/print-orders/{item['code']}", headers=printer).json["data"]
    assert detail["batchId"] == batch_id
    admin = client.simulate_get("/api/admin/print-orders", headers=signed_in(make_admin())).json["data"]
    assert [i["batchId"] for i in admin["items"]] == [batch_id]
    deposit = client.simulate_get(f"/api/reservations/{ids[0]}/print-deposit", headers=member)
    assert deposit.json["data"]["printOrder"]["batchId"] == batch_id
