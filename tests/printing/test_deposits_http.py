"""The single deposit through HTTP: gabarits, preflights, confirmation (quantities from the
configuration, refusals 1-4), stock declarations, and the deposit status as orders move."""

from __future__ import annotations

import pytest

from backend.audit import SecurityEvent
from backend.marketplace.models import FurnitureTypeVersion, FurnitureZone, Reservation
from backend.printing import orders
from backend.printing.models import PrintOrder, PrintOrderLine, PrintPreflight, PrintReusedFace
from tests.factories import add_member, make_admin, make_organization, make_user, signed_in
from tests.printing.helpers import attach, confirm, upload
from tests.printing.test_print_assets_http import multipart

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


@pytest.fixture
def reservation(setting):
    return setting.reservation()


def deposit_same_visual(client, member, setting, reservation):
    """A whole-zone visual on both zones, confirmed: the draft order."""
    fronton, joue = setting.zones
    asset = upload(client, member)
    for zone in (fronton, joue):
        assert attach(client, member, reservation.id, zone.id, None, asset).status_code == 201
    resp = confirm(client, member, reservation.id, [(fronton.id, None), (joue.id, None)])
    assert resp.status_code == 200, resp.json
    return resp.json["data"]


def test_gabarits_give_zones_face_quantities_and_printable_count(client, member, setting, reservation):
    resp = client.simulate_get(f"/api/reservations/{reservation.id}/gabarits", headers=member)
    data = resp.json["data"]
    assert resp.status_code == 200 and data["printableZoneCount"] == 2
    assert [(z["code"], z["faceQuantity"], z["printable"]) for z in data["zones"]] == [
        ("FRONTON", 2, True), ("JOUE", 4, True)]
    assert data["furnitureTypeVersionId"] == setting.version.id


def test_a_preflight_uploads_a_file_and_attaches_it_to_a_face(client, member, setting, reservation):
    joue = setting.zones[1]
    request = multipart(PNG, filename="Joue gauche.png",
                        extra_fields=[("zoneId", joue.id), ("faceIndex", "2")])
    resp = client.simulate_post(f"/api/reservations/{reservation.id}/upload/preflight", body=request["body"],
                                headers={**request["headers"], **member})
    assert resp.status_code == 201, resp.json
    preflight = resp.json["data"]["preflight"]
    assert (preflight["zoneId"], preflight["faceIndex"], preflight["appliesToAllQualifiers"]) == (joue.id, 2, False)
    assert preflight["asset"]["technicalName"] == "joue-gauche.png"
    listed = client.simulate_get(f"/api/reservations/{reservation.id}/upload/preflights", headers=member)
    assert [p["id"] for p in listed.json["data"]["preflights"]] == [preflight["id"]]


def test_a_preflight_on_a_face_past_the_zone_is_refused_before_any_upload(client, member, setting, reservation):
    request = multipart(PNG, extra_fields=[("zoneId", setting.zones[0].id), ("faceIndex", "2")])
    resp = client.simulate_post(f"/api/reservations/{reservation.id}/upload/preflight", body=request["body"],
                                headers={**request["headers"], **member})
    assert resp.status_code == 400 and resp.json["error"]["details"]["faceIndex"] == 2
    assert PrintPreflight.select().count() == 0
    from backend.printing.models import PrintAsset

    assert PrintAsset.select().count() == 0


def test_a_slot_holds_one_file_and_a_whole_zone_file_replaces_the_faces(client, member, setting, reservation):
    joue = setting.zones[1]
    first, second = upload(client, member), upload(client, member)
    attach(client, member, reservation.id, joue.id, 0, first)
    attach(client, member, reservation.id, joue.id, 1, first)
    assert attach(client, member, reservation.id, joue.id, 0, second).status_code == 201
    slots = {(p.face_index, p.asset_id) for p in PrintPreflight.select()}
    assert slots == {(0, second), (1, first)}
    attach(client, member, reservation.id, joue.id, None, first)
    assert {(p.face_index, p.asset_id) for p in PrintPreflight.select()} == {(None, first)}


def test_same_visual_deposit_makes_a_draft_order_with_the_zone_quantities(client, member, setting, reservation):
    data = deposit_same_visual(client, member, setting, reservation)
    assert (data["impressionStatus"], data["supportMode"]) == ("in_review", "print")
    order = data["printOrder"]
    assert order["status"] == "draft" and order["code"].startswith("PM-")
    assert [(line["quantity"], line["faceIndex"]) for line in order["lines"]] == [(2, None), (4, None)]
    assert (order["filesCount"], order["panelCount"]) == (2, 6)
    assert order["totalSurfaceM2"] == round(2 * 1.0 * 0.3 + 4 * 0.4 * 1.2, 3)
    assert "qualifiers" not in order["lines"][0]  # hidden in the industrial recap
    stored = PrintOrder.get(PrintOrder.code == order["code"])
    assert (stored.recipient_city, stored.delivery_target, stored.printer_organization_id) == (
        "Lyon", "store", setting.printer.id)
    assert [line.qualifiers for line in stored.lines.order_by(PrintOrderLine.position)] == [
        ["face 1", "face 2"], ["face 1", "face 2", "face 3", "face 4"]]


def test_per_face_deposit_makes_lines_of_one(client, member, setting, reservation):
    fronton, joue = setting.zones
    asset = upload(client, member)
    attach(client, member, reservation.id, fronton.id, None, asset)
    for face in (0, 1, 3):
        attach(client, member, reservation.id, joue.id, face, asset)
    resp = confirm(client, member, reservation.id, [(fronton.id, None), (joue.id, 0), (joue.id, 1), (joue.id, 3)],
                   reuse=[(joue.id, 2)])
    data = resp.json["data"]
    assert resp.status_code == 200 and data["supportMode"] == "hybrid"
    assert [(line["faceIndex"], line["quantity"]) for line in data["printOrder"]["lines"]] == [
        (None, 2), (0, 1), (1, 1), (3, 1)]
    assert data["reusedFaces"] == [{"zoneId": joue.id, "faceIndex": 2}]


@pytest.mark.parametrize(("case", "expected"), [
    ("unknown_zone", ("zone-x", None)),
    ("face_past_the_zone", ("JOUE", 4)),
    ("reuse_past_the_zone", ("JOUE", 7)),
    ("face_missing", ("JOUE", 3)),
])
def test_confirmation_refusals_name_the_zone_or_face(client, member, setting, reservation, case, expected):
    fronton, joue = setting.zones
    asset = upload(client, member)
    attach(client, member, reservation.id, fronton.id, None, asset)
    for face in range(3):
        attach(client, member, reservation.id, joue.id, face, asset)
    files = [(fronton.id, None), (joue.id, 0), (joue.id, 1), (joue.id, 2)]
    reuse = [(joue.id, 3)]
    if case == "unknown_zone":
        files.append(("zone-x", None))
    elif case == "face_past_the_zone":
        files.append((joue.id, 4))
    elif case == "reuse_past_the_zone":
        reuse.append((joue.id, 7))
    else:
        reuse = []
    resp = confirm(client, member, reservation.id, files, reuse)
    assert resp.status_code == 400 and resp.json["error"]["code"] == "VALIDATION_ERROR", resp.json
    zone_id, face = expected
    zone_id = {"JOUE": joue.id}.get(zone_id, zone_id)
    details = resp.json["error"]["details"]
    assert (details["zoneId"], details["faceIndex"]) == (zone_id, face)
    assert PrintOrder.select().count() == 0
    assert Reservation.get_by_id(reservation.id).impression_status is None


def test_a_confirmed_slot_needs_a_preflight(client, member, setting, reservation):
    resp = confirm(client, member, reservation.id, [(setting.zones[0].id, None)])
    assert resp.status_code == 400 and resp.json["error"]["details"]["zoneId"] == setting.zones[0].id


def test_everything_reused_is_in_stock_without_an_order(client, member, setting, reservation):
    fronton, joue = setting.zones
    resp = confirm(client, member, reservation.id, [], reuse=[(fronton.id, None), (joue.id, None)])
    data = resp.json["data"]
    assert (data["impressionStatus"], data["supportMode"], data["printOrder"]) == ("in_stock", "reuse_all", None)
    assert PrintOrder.select().count() == 0 and len(data["reusedFaces"]) == 6


def _reused_rows(reservation_id):
    return sorted((r.zone_id, r.face_index) for r in PrintReusedFace.select().where(
        PrintReusedFace.reservation_id == reservation_id))


def test_every_path_to_reuse_all_persists_the_same_faces(client, member, setting):
    fronton, joue = setting.zones
    by_zone, by_face, declared = setting.reservation(), setting.reservation(), setting.reservation()
    confirm(client, member, by_zone.id, [], reuse=[(fronton.id, None), (joue.id, None)])
    confirm(client, member, by_face.id, [], reuse=[(fronton.id, 0), (fronton.id, 1)] + [(joue.id, f) for f in range(4)])
    resp = client.simulate_patch(f"/api/reservations/{declared.id}/print-support", headers=member,
                                 json={"inStock": True})
    assert resp.status_code == 200 and resp.json["data"]["impressionStatus"] == "in_stock"
    assert _reused_rows(by_zone.id) == _reused_rows(by_face.id) == _reused_rows(declared.id)
    assert len(_reused_rows(declared.id)) == 6


def test_declaring_stock_replaces_a_draft_and_can_be_withdrawn(client, member, setting, reservation):
    deposit_same_visual(client, member, setting, reservation)
    client.simulate_patch(f"/api/reservations/{reservation.id}/print-support", headers=member, json={"inStock": True})
    assert PrintOrder.select().count() == 0  # the draft never reached a printer
    resp = client.simulate_patch(f"/api/reservations/{reservation.id}/print-support", headers=member,
                                 json={"inStock": False})
    data = resp.json["data"]
    assert (data["impressionStatus"], data["supportMode"], data["reusedFaces"]) == ("to_deposit", None, [])
    again = client.simulate_patch(f"/api/reservations/{reservation.id}/print-support", headers=member,
                                  json={"inStock": False})
    assert again.status_code == 409 and again.json["error"]["details"]["reason"] == "not_in_stock"


def test_stock_on_a_furniture_without_printable_zone_is_unavailable(client, member, setting, reservation):
    FurnitureZone.update(printable=False).where(FurnitureZone.furniture_type_version == setting.version).execute()
    resp = client.simulate_patch(f"/api/reservations/{reservation.id}/print-support", headers=member,
                                 json={"inStock": True})
    assert resp.status_code == 409 and resp.json["error"]["code"] == "PRINT_CONFIGURATION_UNAVAILABLE"


def test_a_new_confirmation_replaces_the_draft(client, member, setting, reservation):
    first = deposit_same_visual(client, member, setting, reservation)["printOrder"]["code"]
    second = deposit_same_visual(client, member, setting, reservation)["printOrder"]["code"]
    assert first != second and [o.code for o in PrintOrder.select()] == [second]


def test_the_deposit_status_follows_the_order(client, member, setting, reservation):
    code = deposit_same_visual(client, member, setting, reservation)["printOrder"]["code"]
    admin = make_admin()

    def status():
        return Reservation.get_by_id(reservation.id).impression_status

    orders.release_order(order_code=code, actor_user_id=admin.id)
    assert status() == "validated"
    closed = confirm(client, member, reservation.id, [(setting.zones[0].id, None), (setting.zones[1].id, None)])
    assert closed.status_code == 409 and closed.json["error"]["details"]["reason"] == "deposit_locked"
    orders.change_status(order_code=code, printer_organization_id=setting.printer.id, next_status="sent",
                         actor_user_id=setting.printer_user.id)
    assert status() == "locked"
    orders.rollback_status(order_code=code, printer_organization_id=setting.printer.id,
                           actor_user_id=setting.printer_user.id)
    assert status() == "validated"
    orders.cancel_order(order_code=code, reason="visuel refusé par l'enseigne", actor_user_id=admin.id)
    assert status() == "to_deposit"
    assert SecurityEvent.select().where(SecurityEvent.event == "print_order.cancelled").count() == 1


def test_a_furniture_without_printer_cannot_be_deposited(client, member, setting, reservation):
    FurnitureTypeVersion.update(printer_organization_id=None).where(
        FurnitureTypeVersion.id == setting.version.id).execute()
    fronton, joue = setting.zones
    asset = upload(client, member)
    attach(client, member, reservation.id, fronton.id, None, asset)
    attach(client, member, reservation.id, joue.id, None, asset)
    resp = confirm(client, member, reservation.id, [(fronton.id, None), (joue.id, None)])
    assert resp.status_code == 409 and resp.json["error"]["details"]["reason"] == "printer_not_configured"


def test_the_default_printer_setting_manufactures_types_without_their_own(make_app, member, setting, reservation):
    import falcon.testing

    FurnitureTypeVersion.update(printer_organization_id=None).where(
        FurnitureTypeVersion.id == setting.version.id).execute()
    client = falcon.testing.TestClient(make_app(default_printer_organization_id=setting.printer.id))
    data = deposit_same_visual(client, member, setting, reservation)
    assert PrintOrder.get(PrintOrder.code == data["printOrder"]["code"]).printer_organization_id == setting.printer.id


def test_another_organizations_reservation_is_not_found(client, setting, reservation):
    other = make_organization("industrial", kyb_status="approved")
    user = make_user()
    add_member(user, other, "manager")
    headers = signed_in(user, other)
    for path in ("gabarits", "upload/preflights", "print-deposit"):
        assert client.simulate_get(f"/api/reservations/{reservation.id}/{path}", headers=headers).status_code == 404
    resp = confirm(client, headers, reservation.id, [])
    assert resp.status_code == 404


def test_a_reservation_not_approved_takes_no_deposit(client, member, setting, reservation):
    Reservation.update(status="pending_review").where(Reservation.id == reservation.id).execute()
    resp = confirm(client, member, reservation.id, [], reuse=[(setting.zones[0].id, None)])
    assert resp.status_code == 409 and resp.json["error"]["details"]["reason"] == "reservation_not_approved"


def test_deposit_routes_are_for_industrials(client, setting, reservation):
    printer = signed_in(setting.printer_user, setting.printer)
    resp = client.simulate_get(f"/api/reservations/{reservation.id}/gabarits", headers=printer)
    assert resp.status_code == 403


def test_a_visual_attached_to_a_slot_cannot_be_deleted(client, member, setting, reservation):
    asset = upload(client, member)
    attach(client, member, reservation.id, setting.zones[0].id, None, asset)
    resp = client.simulate_delete(f"/api/print-assets/{asset}", headers=member)
    assert resp.status_code == 409 and resp.json["error"]["details"]["reason"] == "asset_in_use"


@pytest.mark.parametrize("value", ["yes", 1, "true", None])
def test_stock_declarations_take_a_json_boolean_only(client, member, reservation, value):
    resp = client.simulate_patch(f"/api/reservations/{reservation.id}/print-support", headers=member,
                                 json={"inStock": value})
    assert resp.status_code == 400 and "inStock" in resp.json["error"]["details"]["fields"]
    assert Reservation.get_by_id(reservation.id).impression_status is None


def test_a_preflight_names_a_library_visual_on_either_route(client, member, setting, reservation, group):
    asset = upload(client, member)
    body = {"zoneId": setting.zones[0].id, "faceIndex": None, "assetId": asset}
    single = client.simulate_post(f"/api/reservations/{reservation.id}/upload/preflight-from-asset",
                                  headers=member, json=body)
    batch_id, _ = group(0, visual=False)
    batch = client.simulate_post(f"/api/print-batches/{batch_id}/upload/preflight", headers=member, json=body)
    assert (single.status_code, batch.status_code) == (201, 201)
