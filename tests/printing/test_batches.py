"""Print batches through HTTP: groups, the idempotent draft, preview equal to confirmation, every 400
of the confirmation, target none, the all-reused batch, replayed confirmations, derived status,
cross-organization 404s, aggregated downloads and forms, and the industrial's views."""

from __future__ import annotations

import io
import json
import threading
import zipfile

import pytest
from marshmallow import Schema

from backend.db import database
from backend.marketplace.models import AdSpace, Reservation, Store
from backend.printing import batch_confirmation, batch_preview, batch_views
from backend.printing.batch_preview import BatchDeposit, Reuse
from backend.printing.batch_selection import Delivery
from backend.printing.batch_state import derived_status
from backend.printing.models import DeliveryTarget, PrintOrder, PrintOrderBatch, PrintOrderLine, PrintReusedFace
from backend.printing.order_views import order_rows, with_lines
from schemas.printing.batches import BatchDetailOut, BatchListOut, BatchOrderOut, ConfirmOut, PreviewOut
from tests.documents.conftest import pdf_pages
from tests.factories import add_member, make_organization, make_user, signed_in
from tests.printing.helpers import upload

BATCHES = "/api/print-batches"
PRINTER_BATCHES = "/api/printer/print-batches"


def body(ids, target="store", **extra):
    return {"reservationIds": ids, "delivery": {"target": target}, **extra}


def post(client, headers, batch_id, action, payload):
    return client.simulate_post(f"{BATCHES}/{batch_id}/{action}", headers=headers, json=payload)


# --- derived status ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("statuses", "expected"), [
    ([], "draft"),
    (["cancelled", "cancelled"], "cancelled"),
    (["sent", "sent", "cancelled"], "sent"),
    (["pending", "sent"], "mixed"),
    (["delivered"], "delivered"),
    (["produced", "cancelled", "produced"], "produced"),
])
def test_the_batch_status_is_derived_from_its_orders(statuses, expected):
    assert derived_status(statuses) == expected


# --- groups and drafts ------------------------------------------------------------------------------------


def test_groups_list_the_campaigns_furniture_with_their_draft(client, member, setting, group):
    batch_id, ids = group(3)
    resp = client.simulate_get(f"/api/campaigns/{setting.campaign.id}/print-batches/groups", headers=member)
    (found,) = resp.json["data"]["groups"]
    assert (found["furnitureTypeId"], found["reservationsCount"], found["toDepositCount"], found["draftBatchId"]) == (
        setting.version.furniture_type_id, 3, 3, batch_id)
    listed = client.simulate_get(
        f"/api/campaigns/{setting.campaign.id}/print-batches/groups/{setting.version.furniture_type_id}/reservations",
        headers=member).json["data"]["reservations"]
    assert sorted(r["reservationId"] for r in listed) == sorted(ids) and all(r["eligible"] for r in listed)


def test_opening_a_draft_is_idempotent_and_a_sent_batch_allows_a_new_one(client, member, setting, group):
    batch_id, ids = group(2)
    again = client.simulate_post(BATCHES, headers=member, json={
        "campaignId": setting.campaign.id, "promoFurnitureTypeId": setting.version.furniture_type_id})
    assert again.status_code == 200 and again.json["data"]["batch"]["id"] == batch_id
    assert post(client, member, batch_id, "confirm", body(ids)).status_code == 201
    setting.reservation()
    fresh = client.simulate_post(BATCHES, headers=member, json={
        "campaignId": setting.campaign.id, "promoFurnitureTypeId": setting.version.furniture_type_id})
    assert fresh.status_code == 201 and fresh.json["data"]["batch"]["id"] != batch_id


@pytest.mark.committed
def test_two_concurrent_opens_give_one_draft(request):
    with database.connection_context():
        setting = request.getfixturevalue("setting")
        setting.reservation()
    from backend.printing.batch_drafts import open_batch

    barrier, results = threading.Barrier(2), []

    def open_one():
        with database.connection_context():
            barrier.wait()
            results.append(open_batch(organization_id=setting.industrial.id, campaign_id=setting.campaign.id,
                                      furniture_type_id=setting.version.furniture_type_id, user_id=None))

    threads = [threading.Thread(target=open_one) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({batch.id for batch, _ in results}) == 1 and sorted(created for _, created in results) == [False, True]
    with database.connection_context():
        assert PrintOrderBatch.select().count() == 1


# --- preview and confirmation -------------------------------------------------------------------------------


def test_the_preview_writes_nothing_and_equals_the_confirmation(client, member, setting, group):
    batch_id, ids = group(4)
    payload = body(ids, reuse=[{"zoneId": setting.zones[1].id, "quantity": 5}])
    preview = post(client, member, batch_id, "preview", payload)
    assert preview.status_code == 200, preview.json
    assert PreviewOut().validate(preview.json["data"]) == {}
    assert PrintOrder.select().count() == 0 and PrintReusedFace.select().count() == 0
    confirmed = post(client, member, batch_id, "confirm", payload)
    assert confirmed.status_code == 201 and ConfirmOut().validate(confirmed.json["data"]) == {}
    for key in ("recap", "zones", "reservations", "exclusions"):
        assert confirmed.json["data"][key] == preview.json["data"][key]
    recap = confirmed.json["data"]["recap"]
    # Joue: 4 faces x 4 stores = 16, 5 in stock -> 11 printed; Fronton: 2 x 4 = 8 printed.
    assert (recap["selectedPlacements"], recap["ordersToCreate"], recap["panelsToPrint"]) == (4, 4, 19)
    assert [r["printedPanels"] for r in confirmed.json["data"]["reservations"]] == [2, 5, 6, 6]


def test_preview_and_confirmation_answers_are_their_field_by_field_dumps(client, member, setting, group):
    """The summary is answered as `summarize` built it (`PreviewOut.dump`): exactly what dumping
    it field by field gives, exclusions, reused faces and the confirmation's batch included."""
    batch_id, ids = group(3)
    Reservation.update(impression_status="validated").where(Reservation.id == ids[2]).execute()
    selection = [*ids, ids[0], "unknown-reservation"]
    deposit = BatchDeposit(selection, Delivery(DeliveryTarget.STORE), reuse=Reuse(stock={setting.zones[1].id: 3}))
    organization_id = setting.industrial.id
    preview = batch_preview.preview_batch(batch_id=batch_id, organization_id=organization_id, deposit=deposit)
    assert PreviewOut().dump(preview) == Schema.dump(PreviewOut(), preview)
    assert [e["reason"] for e in PreviewOut().dump(preview)["exclusions"]] == ["not_to_deposit", "duplicate",
                                                                              "not_found"]
    confirmed = batch_confirmation.confirm_batch(batch_id=batch_id, organization_id=organization_id, deposit=deposit,
                                                 default_printer_organization_id=None)
    answer = ConfirmOut().dump(confirmed)
    assert answer == Schema.dump(ConfirmOut(), confirmed) and len(answer["batch"]["orders"]) == 2
    assert json.dumps(answer) == json.dumps(Schema.dump(ConfirmOut(), confirmed))  # the same bytes: keys in order
    assert answer["reservations"] == PreviewOut().dump(preview)["reservations"]
    views = with_lines(list(order_rows().where(PrintOrder.batch_id == batch_id).order_by(PrintOrder.code)))
    assert answer["batch"]["orders"] == [BatchOrderOut().dump(view) for view in views]


@pytest.mark.parametrize("size", [1, 6])
def test_a_preview_reads_in_two_statements_whatever_its_size(setting, group, size):
    """The batch with its furniture type's current configuration and its preflights in one
    statement, the selection in another; nothing per reservation."""
    from tests.support import sql_statements

    batch_id, ids = group(size)
    deposit = BatchDeposit(ids, Delivery(DeliveryTarget.STORE), reuse=Reuse(stock={setting.zones[1].id: 3}))
    with sql_statements() as seen:
        preview = batch_preview.preview_batch(batch_id=batch_id, organization_id=setting.industrial.id, deposit=deposit)
    assert [statement.split()[0] for statement in seen] == ["SELECT", "SELECT"]
    assert "FROM print_order_batch b" in seen[0] and "FROM reservation r" in seen[1]
    assert preview.summary["recap"]["retained"] == size


def test_the_confirmation_makes_pending_orders_and_sends_the_batch(client, member, setting, group):
    batch_id, ids = group(3)
    data = post(client, member, batch_id, "confirm", body(ids)).json["data"]
    batch = PrintOrderBatch.get_by_id(batch_id)
    assert batch.status == "sent" and batch.code.startswith("LOT-") and data["batch"]["code"] == batch.code
    assert batch.printer_organization_id == setting.printer.id
    orders = list(PrintOrder.select().where(PrintOrder.batch_id == batch_id))
    assert len(orders) == 3 and {o.status for o in orders} == {"pending"}
    assert {r.impression_status for r in Reservation.select().where(Reservation.id.in_(ids))} == {"validated"}
    assert sorted(o["reservationId"] for o in data["orders"]) == sorted(ids)


def test_confirming_twice_never_makes_a_second_set_of_orders(client, member, group):
    batch_id, ids = group(2)
    first = post(client, member, batch_id, "confirm", body(ids))
    second = post(client, member, batch_id, "confirm", body(ids))
    other_body = post(client, member, batch_id, "confirm", body(ids[:1], target="none"))
    assert (first.status_code, second.status_code) == (201, 200) and second.json["data"]["replayed"] is True
    for replay in (second, other_body):  # the first confirmation's answer, whatever the body now says
        for key in ("orders", "recap", "zones", "reservations", "exclusions", "batch"):
            assert replay.json["data"][key] == first.json["data"][key], key
        for key in ("recap", "zones", "reservations", "exclusions"):  # the same bytes: keys in their order
            assert json.dumps(replay.json["data"][key]) == json.dumps(first.json["data"][key]), key
    assert PrintOrder.select().count() == 2


def test_exclusions_say_why(client, member, setting, group):
    batch_id, ids = group(3)
    Reservation.update(impression_status="in_stock").where(Reservation.id == ids[0]).execute()
    Reservation.update(status="pending_review").where(Reservation.id == ids[1]).execute()
    data = post(client, member, batch_id, "preview", body([*ids, "unknown-id", ids[2]])).json["data"]
    reasons = [(e["reservationId"], e["reason"]) for e in data["exclusions"]]
    assert reasons == [(ids[0], "not_to_deposit"), (ids[1], "not_approved"), ("unknown-id", "not_found"),
                       (ids[2], "duplicate")]
    recap = data["recap"]
    assert (recap["selectedPlacements"], recap["retained"], recap["excluded"]) == (5, 1, 4)
    nobody = post(client, member, batch_id, "preview", body(ids[:2]))
    assert nobody.status_code == 400
    assert nobody.json["error"]["details"]["excludedBy"] == {"not_to_deposit": 1, "not_approved": 1}


def _store_without_address(setting, reservation_id):
    store = Store.create(organization_id=setting.distributor.id, name="Magasin sans adresse", street="",
                         postal_code="", city="", country="FR")
    AdSpace.update(store=store).where(AdSpace.id == Reservation.get_by_id(reservation_id).ad_space_id).execute()


def test_missing_address_excludes_under_store_only(client, member, setting, group):
    batch_id, ids = group(2)
    _store_without_address(setting, ids[0])
    store = post(client, member, batch_id, "preview", body(ids)).json["data"]
    assert store["exclusions"] == [{"reservationId": ids[0], "reason": "missing_address"}]
    single = body(ids, delivery={"target": "single_address", "snapshot": {
        "name": "Entrepôt Démo", "street": "2 rue du Port", "postalCode": "13002", "city": "Marseille"}})
    single["delivery"] = single.pop("delivery")
    data = post(client, member, batch_id, "preview", single).json["data"]
    assert data["exclusions"] == [] and {r["recipient"] for r in data["reservations"]} == {
        "2 rue du Port, 13002 Marseille"}


def test_reuse_is_checked_against_the_deliverable_population(client, member, setting, group):
    batch_id, ids = group(2)
    _store_without_address(setting, ids[0])
    joue = setting.zones[1]
    # 8 faces of Joue selected, but only 4 deliverable: a stock of 6 is above the capacity.
    resp = post(client, member, batch_id, "confirm", body(ids, reuse=[{"zoneId": joue.id, "quantity": 6}]))
    assert resp.status_code == 400 and resp.json["error"]["details"]["capacity"] == 4
    assert PrintOrder.select().count() == 0 and PrintOrderBatch.get_by_id(batch_id).status == "draft"


def test_explicit_allocation_is_used_under_store_and_a_missing_reservation_is_400(client, member, setting, group):
    batch_id, ids = group(2)
    joue = setting.zones[1]
    reuse = [{"zoneId": joue.id, "quantity": 2}]
    split = [{"zoneId": joue.id, "quantities": [{"reservationId": ids[0], "printed": 4},
                                                {"reservationId": ids[1], "printed": 2}]}]
    data = post(client, member, batch_id, "preview", body(ids, reuse=reuse, allocations=split)).json["data"]
    assert [r["printedPanels"] for r in data["reservations"]] == [6, 4]  # fronton 2 + joue 4, fronton 2 + joue 2
    missing = [{"zoneId": joue.id, "quantities": [{"reservationId": ids[0], "printed": 4}]}]
    resp = post(client, member, batch_id, "confirm", body(ids, reuse=reuse, allocations=missing))
    assert resp.status_code == 400 and resp.json["error"]["details"]["reservationIds"] == [ids[1]]


def test_a_zone_takes_one_stock_total(client, member, setting, group):
    batch_id, ids = group(2)
    joue = setting.zones[1].id
    resp = post(client, member, batch_id, "preview", body(ids, reuse=[{"zoneId": joue, "quantity": 1},
                                                                      {"zoneId": joue, "quantity": 2}]))
    assert resp.status_code == 400 and "reuse" in resp.json["error"]["details"]["fields"]


def test_target_none_prints_nothing(client, member, setting, group):
    batch_id, ids = group(2)
    resp = post(client, member, batch_id, "confirm", body(ids, target="none"))
    assert resp.status_code == 400 and "delivery" in resp.json["error"]["details"]["fields"]
    stock = [{"zoneId": z.id, "quantity": z.face_quantity * 2} for z in setting.zones]
    preview = post(client, member, batch_id, "preview", body(ids, target="none", reuse=stock)).json["data"]
    assert preview["exclusions"] == [] and preview["recap"]["panelsToPrint"] == 0


def test_an_all_reused_batch_is_deleted_without_a_code(client, member, setting, group):
    batch_id, ids = group(2)
    before = database.execute_sql("SELECT last_value, is_called FROM print_batch_code_seq").fetchone()
    stock = [{"zoneId": z.id, "quantity": z.face_quantity * 2} for z in setting.zones]
    resp = post(client, member, batch_id, "confirm", body(ids, target="none", reuse=stock))
    assert resp.status_code == 200 and resp.json["data"]["deleted"] is True and resp.json["data"]["batch"] is None
    assert PrintOrderBatch.get_or_none(PrintOrderBatch.id == batch_id) is None and PrintOrder.select().count() == 0
    assert database.execute_sql("SELECT last_value, is_called FROM print_batch_code_seq").fetchone() == before
    assert {r.impression_status for r in Reservation.select().where(Reservation.id.in_(ids))} == {"in_stock"}
    assert PrintReusedFace.select().count() == 12


def test_a_reservation_whose_zones_print_nothing_gets_no_order(client, member, setting, group):
    batch_id, ids = group(3)
    stock = [{"zoneId": z.id, "quantity": z.face_quantity} for z in setting.zones]  # one furniture's worth
    data = post(client, member, batch_id, "confirm", body(ids, reuse=stock)).json["data"]
    assert data["recap"]["ordersToCreate"] == 2 and len(data["orders"]) == 2
    assert ids[0] not in {o["reservationId"] for o in data["orders"]}


def test_refusals_of_the_shared_calculation_are_400(client, member, setting, group):
    batch_id, ids = group(2)
    resp = post(client, member, batch_id, "confirm", body(ids, files=[{"zoneId": "zone-x", "faceIndex": None}]))
    assert resp.status_code == 400 and resp.json["error"]["details"]["zoneId"] == "zone-x"
    resp = post(client, member, batch_id, "confirm", body(["nobody"]))
    assert resp.status_code == 400 and "reservationIds" in resp.json["error"]["details"]["fields"]


def test_a_sent_batch_takes_no_more_preflights_nor_previews(client, member, setting, group):
    batch_id, ids = group(1)
    post(client, member, batch_id, "confirm", body(ids))
    resp = client.simulate_post(f"{BATCHES}/{batch_id}/upload/preflight-from-asset", headers=member, json={
        "zoneId": setting.zones[0].id, "faceIndex": None, "assetId": upload(client, member)})
    assert resp.status_code == 409 and resp.json["error"]["details"]["reason"] == "batch_sent"
    preview = post(client, member, batch_id, "preview", body(ids))
    assert preview.status_code == 409 and preview.json["error"]["details"]["reason"] == "batch_sent"


# --- printer and industrial views ---------------------------------------------------------------------------


def test_the_printer_lists_and_reads_its_sent_batches(client, member, printer, setting, group):
    batch_id, ids = group(3)
    code = post(client, member, batch_id, "confirm", body(ids)).json["data"]["batch"]["code"]
    setting.reservation()
    group(0, visual=False)  # a new draft of the group: never listed to the printer
    listed = client.simulate_get(PRINTER_BATCHES, headers=printer).json["data"]
    assert BatchListOut().validate(listed) == {}
    (item,) = listed["batches"]
    assert (item["code"], item["status"], item["ordersCount"], item["totalPanels"]) == (code, "pending", 3, 18)
    detail = client.simulate_get(f"{PRINTER_BATCHES}/{code}", headers=printer).json["data"]
    assert BatchDetailOut().validate(detail) == {}
    assert detail["distinctVisualsCount"] == 2 and [a["quantity"] for a in detail["aggregatedLines"]] == [6, 12]
    assert [a["fileName"] for a in detail["aggregatedLines"]] == ["visuel_qte6.pdf", "visuel_2_qte12.pdf"]
    assert len(detail["manifest"]) == 3 and detail["manifest"][0]["files"] == [
        {"fileName": "visuel_qte6.pdf", "quantity": 2}, {"fileName": "visuel_2_qte12.pdf", "quantity": 4}]


def test_the_aggregated_zip_totals_equal_the_orders_lines(client, member, printer, setting, group):
    batch_id, ids = group(4)
    joue = setting.zones[1]
    code = post(client, member, batch_id, "confirm", body(ids, reuse=[{"zoneId": joue.id, "quantity": 3}])).json[
        "data"]["batch"]["code"]
    resp = client.simulate_get(f"{PRINTER_BATCHES}/{code}/download", headers=printer)
    assert resp.status_code == 200 and int(resp.headers["content-length"]) == len(resp.content)
    archive = zipfile.ZipFile(io.BytesIO(resp.content))
    totals = {name: int(name.rsplit("_qte", 1)[1].split(".")[0]) for name in archive.namelist()}
    lines = PrintOrderLine.select().join(PrintOrder).where(PrintOrder.batch_id == batch_id)
    assert sum(totals.values()) == sum(line.quantity for line in lines) == 2 * 4 + 4 * 4 - 3
    reused = PrintReusedFace.select().where(PrintReusedFace.batch_id == batch_id).count()
    assert sum(totals.values()) + reused == (2 + 4) * 4  # spec B aggregated download invariant
    # The download aggregates in the database what the detail aggregates from the orders' views.
    detail = client.simulate_get(f"{PRINTER_BATCHES}/{code}", headers=printer).json["data"]
    assert archive.namelist() == [line["fileName"] for line in detail["aggregatedLines"]]
    printer_id = setting.printer.id
    assert (batch_views.printer_batch_files(batch_code=code, printer_organization_id=printer_id)
            == batch_views.printer_batch(batch_code=code, printer_organization_id=printer_id).archive_files)


def test_the_batch_order_form_has_the_recap_then_the_manifest(client, member, printer, group, seeded_templates):
    batch_id, ids = group(2)
    code = post(client, member, batch_id, "confirm", body(ids)).json["data"]["batch"]["code"]
    resp = client.simulate_get(f"{PRINTER_BATCHES}/{code}/bon-de-commande", headers=printer)
    assert resp.status_code == 200 and resp.headers["content-type"] == "application/pdf"
    text = " ".join(pdf_pages(resp.content))
    assert f"Bon de commande du lot {code}" in text and "Nombre total de panneaux du lot : 12" in text
    assert text.index("Récapitulatif") < text.index("Manifeste")
    for order in PrintOrder.select().where(PrintOrder.batch_id == batch_id):
        assert order.code in text
    assert "1 rue A, 69001 Lyon" in text


def test_batch_routes_are_scoped_and_drafts_are_not_the_printers(client, member, printer, setting, group):
    batch_id, ids = group(1)
    draft = client.simulate_get(f"{BATCHES}/{batch_id}", headers=member).json["data"]["batch"]
    assert draft["status"] == "draft" and draft["code"] is None
    other_industrial = make_organization("industrial", kyb_status="approved")
    user = make_user()
    add_member(user, other_industrial, "manager")
    stranger = signed_in(user, other_industrial)
    assert client.simulate_get(f"{BATCHES}/{batch_id}", headers=stranger).status_code == 404
    assert post(client, stranger, batch_id, "preview", body(ids)).status_code == 404
    assert post(client, stranger, batch_id, "confirm", body(ids)).status_code == 404
    code = post(client, member, batch_id, "confirm", body(ids)).json["data"]["batch"]["code"]
    other_printer = make_organization("printer")
    printer_user = make_user()
    add_member(printer_user, other_printer, "member")
    for suffix in ("", "/download", "/bon-de-commande"):
        assert client.simulate_get(f"{PRINTER_BATCHES}/{code}{suffix}",
                                   headers=signed_in(printer_user, other_printer)).status_code == 404
    assert client.simulate_get(f"/api/industrial/print-batches/{code}", headers=stranger).status_code == 404


def test_cancelled_orders_keep_no_batch_code_anywhere(client, member, printer, setting, group):
    from backend.printing.orders import cancel_order
    from tests.factories import make_admin

    batch_id, ids = group(2)
    data = post(client, member, batch_id, "confirm", body(ids)).json["data"]
    code, cancelled = data["batch"]["code"], data["orders"][0]
    admin = make_admin()
    cancel_order(order_code=cancelled["code"], reason="magasin fermé", actor_user_id=admin.id)
    orders = client.simulate_get("/api/printer/print-orders", headers=printer).json["data"]["orders"]
    assert {o["code"]: o["batchCode"] for o in orders} == {cancelled["code"]: None, data["orders"][1]["code"]: code}
    detail = client.simulate_get(f"/api/printer/print-orders/{cancelled['code']}", headers=printer).json["data"]
    assert (detail["batchCode"], detail["printOrderBatch"]) == (None, None)
    admin_items = client.simulate_get("/api/admin/print-orders", headers=signed_in(admin)).json["data"]["items"]
    assert {i["code"]: i["batchCode"] for i in admin_items}[cancelled["code"]] is None
    manifest = client.simulate_get(f"{PRINTER_BATCHES}/{code}", headers=printer).json["data"]["manifest"]
    assert {m["code"]: m["status"] for m in manifest}[cancelled["code"]] == "cancelled"  # still in the manifest
    listing = client.simulate_get("/api/printer/print-batches", headers=printer).json["data"]["batches"]
    assert listing[0]["status"] == "pending"  # cancelled orders do not count in the derived status


def test_the_industrial_reads_its_sent_batches_with_store_names(client, member, setting, group):
    batch_id, ids = group(2)
    code = post(client, member, batch_id, "confirm", body(ids)).json["data"]["batch"]["code"]
    listed = client.simulate_get(f"/api/campaigns/{setting.campaign.id}/print-batches", headers=member).json["data"]
    assert [b["code"] for b in listed["batches"]] == [code]
    detail = client.simulate_get(f"/api/industrial/print-batches/{code}", headers=member).json["data"]
    assert {m["storeName"] for m in detail["manifest"]} == {"Magasin Lyon"}
    items = client.simulate_get("/api/industrial/impressions", headers=member).json["data"]["items"]
    assert {i["batchCode"] for i in items} == {code}
