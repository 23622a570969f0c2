"""Lists around print orders: the industrial's impressions (order status and batch code in one query
per page, routing, action labels), the admin's orders and deposits, release and cancellation, and
the deposit opened by a reservation's approval."""

from __future__ import annotations

import pytest

from actors.printing import open_print_deposit
from backend.audit import SecurityEvent
from backend.listing import ListParams
from backend.marketplace.models import FurnitureZone, Reservation
from backend.printing import impressions, order_views
from backend.printing.models import PrintOrder
from schemas.printing.deposits import ImpressionDetailOut, ImpressionItemPage
from schemas.printing.orders import AdminPrintOrderPage
from tests.factories import make_admin, signed_in
from tests.printing.helpers import attach, confirm, upload
from tests.support import sql_statements


@pytest.fixture
def admin_headers():
    return signed_in(make_admin())


@pytest.fixture
def deposited(client, member, setting):
    """`deposited()`: a reservation whose same-visual deposit is confirmed (its draft order)."""

    def make():
        reservation = setting.reservation()
        asset = upload(client, member)
        for zone in setting.zones:
            attach(client, member, reservation.id, zone.id, None, asset)
        data = confirm(client, member, reservation.id, [(z.id, None) for z in setting.zones]).json["data"]
        return reservation, data["printOrder"]["code"]

    return make


def test_the_approval_consumer_opens_the_deposit_once(setting):
    reservation = setting.reservation()
    open_print_deposit(reservation.id)
    assert Reservation.get_by_id(reservation.id).impression_status == "to_deposit"
    Reservation.update(impression_status="in_review").where(Reservation.id == reservation.id).execute()
    open_print_deposit(reservation.id)  # a redelivered message changes nothing
    assert Reservation.get_by_id(reservation.id).impression_status == "in_review"


def test_impressions_show_order_status_batch_code_route_and_action(client, member, setting, deposited):
    waiting = setting.reservation()
    reviewed, code = deposited()
    resp = client.simulate_get("/api/industrial/impressions", headers=member, params={"sortBy": "createdAt"})
    data = resp.json["data"]
    assert resp.status_code == 200 and ImpressionItemPage().validate(data) == {}
    by_id = {item["reservationId"]: item for item in data["items"]}
    assert by_id[waiting.id]["impressionStatus"] == "to_deposit"  # approved, consumer not run yet
    assert by_id[waiting.id]["route"] == f"/industrial/campaign/{setting.campaign.id}/impressions"
    assert by_id[waiting.id]["action"]["code"] == "manage_print" and by_id[waiting.id]["printOrderStatus"] is None
    item = by_id[reviewed.id]
    assert (item["impressionStatus"], item["printOrderCode"], item["printOrderStatus"]) == ("in_review", code, "draft")
    assert item["route"] == f"/industrial/impressions/{reviewed.id}" and item["action"]["code"] == "view_order"


def test_a_furniture_without_printable_zone_routes_to_the_single_page(client, member, setting):
    reservation = setting.reservation()
    FurnitureZone.update(printable=False).where(FurnitureZone.furniture_type_version == setting.version).execute()
    item = client.simulate_get(f"/api/industrial/impressions/{reservation.id}", headers=member).json["data"]
    assert ImpressionDetailOut().validate(item) == {}
    assert item["printableZoneCount"] == 0 and item["route"] == f"/industrial/impressions/{reservation.id}"


def test_a_cancelled_order_gives_way_to_no_order(client, member, setting, deposited):
    reservation, code = deposited()
    from backend.printing.orders import cancel_order

    cancel_order(order_code=code, reason="erreur de visuel", actor_user_id=make_admin().id)
    item = client.simulate_get(f"/api/industrial/impressions/{reservation.id}", headers=member).json["data"]
    assert (item["printOrderCode"], item["impressionStatus"], item["action"]["code"]) == (
        None, "to_deposit", "manage_print")


def test_impression_pages_cost_two_queries_whatever_their_size(setting, deposited):
    for _ in range(6):
        deposited()
    costs = []
    for size in (2, 6):
        with sql_statements() as seen:
            page = impressions.impressions(organization_id=setting.industrial.id, params=ListParams(page_size=size))
        assert len(page.items) == size and all(item.order for item in page.items)
        costs.append(len(seen))
    assert costs == [2, 2]


def test_printer_and_admin_pages_cost_two_queries_whatever_their_size(setting, deposited):
    admin = make_admin()
    from backend.printing.orders import release_order

    for _ in range(6):
        release_order(order_code=deposited()[1], actor_user_id=admin.id)
    for size in (2, 6):
        with sql_statements() as seen:
            orders, total = order_views.printer_orders(printer_organization_id=setting.printer.id, limit=size)
        assert (len(orders), total, len(seen)) == (size, 6, 2)
        with sql_statements() as seen:
            page = order_views.admin_orders(params=ListParams(page_size=size))
        assert (len(page.items), page.total, len(seen)) == (size, 6, 2)


def test_admin_deposits_release_and_the_order_list(client, admin_headers, setting, deposited):
    reservation, code = deposited()
    listed = client.simulate_get("/api/admin/print-deposits", headers=admin_headers).json["data"]
    assert [(i["reservationId"], i["printOrderCode"]) for i in listed["items"]] == [(reservation.id, code)]
    orders_page = client.simulate_get("/api/admin/print-orders", headers=admin_headers).json["data"]
    assert orders_page["total"] == 0  # drafts are not listed
    resp = client.simulate_post(f"/api/admin/print-orders/{code}/release", headers=admin_headers)
    assert resp.status_code == 200 and resp.json["data"]["status"] == "pending"
    again = client.simulate_post(f"/api/admin/print-orders/{code}/release", headers=admin_headers)
    assert again.status_code == 400 and again.json["error"]["code"] == "VALIDATION_ERROR"
    page = client.simulate_get("/api/admin/print-orders", headers=admin_headers).json["data"]
    assert AdminPrintOrderPage().validate(page) == {}
    (item,) = page["items"]
    assert item["code"] == code and item["lines"][1]["qualifiers"] == ["face 1", "face 2", "face 3", "face 4"]
    assert SecurityEvent.select().where(SecurityEvent.event == "print_order.released",
                                        SecurityEvent.target_id == code).count() == 1
    assert client.simulate_get("/api/admin/print-deposits", headers=admin_headers).json["data"]["total"] == 0


def test_admin_cancellation_needs_a_reason_and_spares_delivered_orders(client, admin_headers, deposited):
    _, code = deposited()
    missing = client.simulate_post(f"/api/admin/print-orders/{code}/cancel", headers=admin_headers,
                                   json={"reason": "   "})
    assert missing.status_code == 400
    resp = client.simulate_post(f"/api/admin/print-orders/{code}/cancel", headers=admin_headers,
                                json={"reason": "doublon"})
    assert resp.status_code == 200 and (resp.json["data"]["status"], resp.json["data"]["cancelReason"]) == (
        "cancelled", "doublon")
    (event,) = SecurityEvent.select().where(SecurityEvent.event == "print_order.cancelled")
    assert event.details["reason"] == "doublon" and event.details["previousStatus"] == "draft"
    _, delivered = deposited()
    PrintOrder.update(status="delivered").where(PrintOrder.code == delivered).execute()
    refused = client.simulate_post(f"/api/admin/print-orders/{delivered}/cancel", headers=admin_headers,
                                   json={"reason": "trop tard"})
    assert refused.status_code == 400 and refused.json["error"]["details"]["currentStatus"] == "delivered"


def test_admin_printing_routes_are_for_admins(client, member, deposited):
    _, code = deposited()
    assert client.simulate_get("/api/admin/print-orders", headers=member).status_code == 403
    assert client.simulate_post(f"/api/admin/print-orders/{code}/release", headers=member).status_code == 403
    assert client.simulate_get("/api/admin/print-deposits").status_code == 401


def test_reservations_carry_their_active_print_order(client, member, setting, deposited):
    reservation, code = deposited()
    detail = client.simulate_get(f"/api/reservations/{reservation.id}", headers=member).json["data"]["reservation"]
    assert detail["printOrder"] == {"code": code, "status": "draft"} and detail["impressionStatus"] == "in_review"
    distributor = make_admin()  # admins read any reservation too
    seen = client.simulate_get(f"/api/reservations/{reservation.id}", headers=signed_in(distributor))
    assert seen.json["data"]["reservation"]["printOrder"]["code"] == code
    listed = client.simulate_get("/api/reservations", headers=member).json["data"]["items"]
    item = next(i for i in listed if i["id"] == reservation.id)
    assert (item["printOrderStatus"], item["batchCode"]) == ("draft", None)
    plain = setting.reservation()
    detail = client.simulate_get(f"/api/reservations/{plain.id}", headers=member).json["data"]["reservation"]
    assert (detail["printOrder"], detail["impressionStatus"]) == (None, "to_deposit")


def test_the_workload_export_reads_every_order_in_chunks_oldest_first(setting, deposited):
    admin = make_admin()
    from backend.printing.orders import release_order

    codes = [deposited()[1] for _ in range(5)]
    for code in codes:
        release_order(order_code=code, actor_user_id=admin.id)
    read = [view.order.code for view in order_views.printer_workload(setting.printer.id, chunk=2)]
    assert read == codes
