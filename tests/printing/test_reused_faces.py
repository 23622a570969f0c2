"""The reused faces of a reservation are always those its latest deposit declares: a cancelled
order gives them back, and a batch confirmation replaces whatever an earlier deposit left."""

from __future__ import annotations

from backend.printing.models import PrintOrder, PrintReusedFace
from backend.printing.orders import cancel_order, release_order
from tests.factories import make_admin
from tests.printing.helpers import attach, confirm, upload


def _reused(reservation_id: str) -> set[tuple[str, int | None]]:
    return {(r.zone_id, r.face_index) for r in PrintReusedFace.select().where(
        PrintReusedFace.reservation_id == reservation_id)}


def test_a_cancelled_order_reuses_nothing_and_the_batch_can_take_its_reservation(client, member, setting, group):
    fronton, joue = setting.zones
    reservation = setting.reservation()
    asset = upload(client, member)
    attach(client, member, reservation.id, fronton.id, None, asset)
    deposit = confirm(client, member, reservation.id, [(fronton.id, None)], reuse=[(joue.id, f) for f in range(4)])
    assert deposit.status_code == 200, deposit.json
    code = deposit.json["data"]["printOrder"]["code"]
    admin = make_admin()
    release_order(order_code=code, actor_user_id=admin.id)
    cancel_order(order_code=code, reason="visuel refusé par le magasin", actor_user_id=admin.id)
    assert _reused(reservation.id) == set()

    # an earlier deposit's rows left behind (as before the fix) must not break the batch either
    PrintReusedFace.create(reservation_id=reservation.id, zone_id=joue.id, face_index=0)
    batch_id, ids = group(1)
    answer = client.simulate_post(f"/api/print-batches/{batch_id}/confirm", headers=member, json={
        "reservationIds": [reservation.id, *ids], "delivery": {"target": "store"},
        "reuse": [{"zoneId": joue.id, "quantity": 8}]})
    assert answer.status_code == 201, answer.json
    assert PrintOrder.select().where(PrintOrder.batch_id == batch_id).count() == 2
    rows = list(PrintReusedFace.select().where(PrintReusedFace.reservation_id == reservation.id))
    assert {(r.zone_id, r.face_index) for r in rows} == {(joue.id, f) for f in range(4)}
    assert {r.batch_id for r in rows} == {batch_id}
