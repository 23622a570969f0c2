"""The admin "faces" list: every face of every ad space, its reservation and its deposited visual."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from backend import clock
from backend.marketplace.models import AdSpace, Store
from backend.printing.models import PrintAsset, PrintOrder, PrintOrderLine, PrintReusedFace
from backend.printing.orders import allocate_order_codes
from backend.printing.plans import Recipient
from tests.factories import make_admin, signed_in

DURING = datetime(2026, 3, 10, tzinfo=UTC)  # inside the setting's reservation dates


def _asset(setting, name: str) -> PrintAsset:
    return PrintAsset.create(organization_id=setting.industrial.id, original_name=name, technical_name=name,
                             content_type="application/pdf", size_bytes=10, sha256="0" * 64, storage_key=f"k/{name}")


def _order(setting, reservation, status: str, lines: list[tuple]) -> PrintOrder:
    order = PrintOrder.create(code=allocate_order_codes(1)[0], reservation_id=reservation.id,
                              printer_organization_id=setting.printer.id,
                              industrial_organization_id=setting.industrial.id, status=status,
                              **Recipient.of_store(setting.store).columns())
    for position, (zone, face_index, asset) in enumerate(lines):
        PrintOrderLine.create(order=order, position=position, zone_id=zone.id, face_index=face_index, quantity=1,
                              asset_id=asset.id)
    return order


@pytest.fixture
def faces(client, setting):
    """Ad space A (reserved, visuals deposited) in the setting's store; ad space B (free) in another."""
    fronton, joue = setting.zones
    reservation = setting.reservation()
    _order(setting, reservation, "cancelled", [(fronton, None, _asset(setting, "ancien.pdf"))])
    order = _order(setting, reservation, "draft", [(fronton, None, _asset(setting, "fronton.pdf")),
                                                   (joue, 2, _asset(setting, "joue-2.pdf"))])
    PrintReusedFace.create(reservation_id=reservation.id, zone_id=joue.id, face_index=3)
    other = Store.create(organization_id=setting.distributor.id, name="Zz Magasin Annecy", street="2 rue B",
                         postal_code="74000", city="Annecy", country="FR")
    free = AdSpace.create(store=other, name="Allée 4", promo_furniture_type=setting.version.furniture_type,
                          placement_universe=setting.universe, price_cents=5_000)
    admin = signed_in(make_admin())

    def listed(query: str = "", *, headers=None, at=DURING):
        with clock.frozen_at(at):
            return client.simulate_get("/api/admin/faces", query_string=query, headers=headers or admin)

    listed.reservation, listed.order, listed.free, listed.other = reservation, order, free, other
    return listed


def test_every_face_of_every_ad_space_is_listed_with_its_reservation_and_visual(faces, setting):
    page = faces("pageSize=100").json["data"]
    assert page["total"] == 12  # two ad spaces x (2 + 4 faces)
    first = page["items"][0]
    assert (first["store"]["name"], first["zone"]["code"], first["faceIndex"]) == ("Magasin Lyon", "FRONTON", 1)
    assert first["reservation"]["id"] == faces.reservation.id and first["reservation"]["status"] == "approved"
    assert first["visual"] == {"assetId": first["visual"]["assetId"], "name": "fronton.pdf", "wholeZone": True,
                               "printOrderCode": faces.order.code, "printOrderStatus": "draft"}
    by_face = {(f["adSpace"]["id"], f["zone"]["code"], f["faceIndex"]): f for f in page["items"]}
    reserved = faces.reservation.ad_space_id
    assert by_face[(reserved, "JOUE", 2)]["visual"]["name"] == "joue-2.pdf"
    assert by_face[(reserved, "JOUE", 2)]["visual"]["wholeZone"] is False
    assert by_face[(reserved, "JOUE", 1)]["visual"] is None
    assert by_face[(reserved, "JOUE", 3)]["supportReused"] is True
    free = by_face[(faces.free.id, "FRONTON", 1)]
    assert (free["reservation"], free["visual"], free["store"]["city"]) == (None, None, "Annecy")


def test_faces_are_filtered_by_store_and_deposit_searched_sorted_and_paginated(faces, setting):
    answer = faces("deposited=true")
    assert answer.status_code == 200, answer.text
    deposited = answer.json["data"]
    assert deposited["total"] == 3 and {f["visual"]["name"] for f in deposited["items"]} == {
        "fronton.pdf", "joue-2.pdf"}
    assert faces("deposited=false").json["data"]["total"] == 9
    assert faces(f"storeId={faces.other.id}").json["data"]["total"] == 6
    assert faces("search=joue").json["data"]["total"] == 8  # the JOUE faces of both ad spaces
    assert faces("search=fronton.pdf").json["data"]["total"] == 2  # the visual's name
    assert faces("search=annecy&deposited=false").json["data"]["total"] == 6
    by_index = faces("sortBy=faceIndex&sortDir=desc&pageSize=2").json["data"]
    assert [f["faceIndex"] for f in by_index["items"]] == [4, 4] and by_index["total"] == 12
    last = faces("page=3&pageSize=5").json["data"]
    assert (len(last["items"]), last["page"]) == (2, 3)
    assert faces("sortBy=price").status_code == 400


def test_an_ended_reservation_is_not_the_face_s_and_the_list_is_admin_only(faces, setting):
    after = faces("deposited=true", at=datetime(2026, 4, 2, tzinfo=UTC)).json["data"]
    assert after["total"] == 0
    assert faces(headers=signed_in(setting.industrial_user, setting.industrial)).status_code == 403
