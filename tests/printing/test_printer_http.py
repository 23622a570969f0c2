"""Printer routes of print orders through HTTP: isolation, list, detail, status steps, delivery and
its notification, the ZIP of visuals, the order form, counters and the CSV export."""

from __future__ import annotations

import csv
import io
import zipfile

import pytest

from backend.email.messages import EmailMessage
from backend.outbox import OutboxMessage
from backend.printing import orders
from backend.printing.models import PrintOrder
from schemas.printing.orders import PrinterCountersOut, PrinterPrintOrderDetailOut, PrinterPrintOrderListOut
from tests.documents.conftest import pdf_pages
from tests.factories import add_member, make_admin, make_organization, make_user, signed_in
from tests.printing.helpers import attach, confirm, upload
from tests.printing.test_print_assets_http import PDF

BASE = "/api/printer/print-orders"


@pytest.fixture
def released(client, member, setting):
    """`released(per_face=False)`: an order deposited over HTTP and released by an admin."""
    admin = make_admin()

    def make(per_face: bool = False, content: bytes = PDF, filename: str = "Affiche Été.pdf") -> str:
        reservation = setting.reservation()
        fronton, joue = setting.zones
        asset = upload(client, member, data=content, filename=filename)
        attach(client, member, reservation.id, fronton.id, None, asset)
        slots = [(fronton.id, None)]
        if per_face:
            for face in range(4):
                attach(client, member, reservation.id, joue.id, face, asset)
                slots.append((joue.id, face))
        else:
            attach(client, member, reservation.id, joue.id, None, asset)
            slots.append((joue.id, None))
        code = confirm(client, member, reservation.id, slots).json["data"]["printOrder"]["code"]
        orders.release_order(order_code=code, actor_user_id=admin.id)
        return code

    return make


def test_printer_routes_need_a_printer_organization(client, setting, released):
    code = released()
    industrial = signed_in(setting.industrial_user, setting.industrial)
    assert client.simulate_get(BASE, headers=industrial).status_code == 403
    # a printer user whose active organization is not `printer:*`
    user = make_user(roles=["printer"])
    add_member(user, make_organization("industrial", kyb_status="approved"), "member")
    assert client.simulate_get(f"{BASE}/{code}", headers=signed_in(user)).status_code == 403
    assert client.simulate_get(BASE).status_code == 401


def test_another_printers_orders_are_not_found(client, setting, released):
    code = released()
    other = make_organization("printer")
    user = make_user()
    add_member(user, other, "member")
    headers = signed_in(user, other)
    assert client.simulate_get(BASE, headers=headers).json["data"] == {"orders": []}
    for suffix in ("", "/download", "/bon-de-commande"):
        assert client.simulate_get(f"{BASE}/{code}{suffix}", headers=headers).status_code == 404
    resp = client.simulate_patch(f"{BASE}/{code}/status", headers=headers, json={"nextStatus": "sent"})
    assert resp.status_code == 404 and PrintOrder.get(PrintOrder.code == code).status == "pending"


def test_the_list_excludes_drafts_and_hides_qualifiers(client, member, printer, setting, released):
    code = released()
    draft = setting.reservation()
    asset = upload(client, member)
    for zone in setting.zones:
        attach(client, member, draft.id, zone.id, None, asset)
    confirm(client, member, draft.id, [(z.id, None) for z in setting.zones])
    resp = client.simulate_get(BASE, headers=printer)
    data = resp.json["data"]
    assert PrinterPrintOrderListOut().validate(data) == {}
    assert [o["code"] for o in data["orders"]] == [code] and resp.headers["x-total-count"] == "1"
    item = data["orders"][0]
    assert (item["panelCount"], item["filesCount"], item["batchCode"]) == (6, 2, None)
    assert all("qualifiers" not in line for line in item["lines"])
    assert [line["fileName"] for line in item["lines"]] == ["affiche-ete_qte2.pdf", "affiche-ete_2_qte4.pdf"]


def test_the_detail_has_campaign_recipient_and_delivery(client, printer, setting, released):
    code = released()
    data = client.simulate_get(f"{BASE}/{code}", headers=printer).json["data"]
    assert PrinterPrintOrderDetailOut().validate(data) == {}
    assert data["campaign"] == {"id": setting.campaign.id, "name": "Printemps"}
    assert data["printOrderBatch"] is None and data["industrial"]["id"] == setting.industrial.id
    assert data["recipient"]["formatted"] == "1 rue A, 69001 Lyon"
    assert data["delivery"] == {"carrier": None, "trackingNumber": None, "trackingUrl": None}


def test_the_printer_walks_the_order_forward_and_back(client, printer, released):
    code = released()
    for step in ("sent", "in_production", "produced", "delivered"):
        resp = client.simulate_patch(f"{BASE}/{code}/status", headers=printer, json={"nextStatus": step})
        assert resp.status_code == 200 and resp.json["data"]["status"] == step
    resp = client.simulate_patch(f"{BASE}/{code}/status-rollback", headers=printer)
    assert resp.json["data"]["status"] == "produced"
    skipped = client.simulate_patch(f"{BASE}/{code}/status", headers=printer, json={"nextStatus": "sent"})
    assert skipped.status_code == 400 and skipped.json["error"]["details"] == {
        "currentStatus": "produced", "requestedStatus": "sent"}
    unknown = client.simulate_patch(f"{BASE}/{code}/status", headers=printer, json={"nextStatus": "shipped"})
    assert unknown.status_code == 400 and "nextStatus" in unknown.json["error"]["details"]["fields"]


def test_a_cancelled_order_keeps_no_batch_code_and_moves_no_more(client, printer, released):
    code = released()
    orders.cancel_order(order_code=code, reason="annulée par l'annonceur", actor_user_id=make_admin().id)
    data = client.simulate_get(f"{BASE}/{code}", headers=printer).json["data"]
    assert (data["status"], data["batchCode"]) == ("cancelled", None)
    resp = client.simulate_patch(f"{BASE}/{code}/status", headers=printer, json={"nextStatus": "sent"})
    assert resp.status_code == 400
    resp = client.simulate_patch(f"{BASE}/{code}/delivery", headers=printer, json={"carrier": "DHL"})
    assert resp.status_code == 409


def test_delivery_update_notifies_the_industrial_through_the_outbox(client, printer, setting, released, config):
    code = released()
    body = {"carrier": "Geodis", "trackingNumber": "GX-42", "trackingUrl": "https://suivi.example/GX-42",
            "notifyIndustrial": True}
    resp = client.simulate_patch(f"{BASE}/{code}/delivery", headers=printer, json=body)
    assert resp.status_code == 200 and resp.json["data"]["delivery"] == {
        "carrier": "Geodis", "trackingNumber": "GX-42", "trackingUrl": "https://suivi.example/GX-42"}
    (message,) = EmailMessage.select().where(EmailMessage.template == "print_order_delivery")
    assert message.to_address == setting.industrial_user.email
    assert code in message.subject and "GX-42" in message.body_text and "Geodis" in message.body_text
    assert OutboxMessage.select().where(OutboxMessage.actor_name == "deliver_email").count() == 1
    quiet = client.simulate_patch(f"{BASE}/{code}/delivery", headers=printer, json={"trackingNumber": None})
    assert quiet.json["data"]["delivery"]["trackingNumber"] is None
    assert quiet.json["data"]["delivery"]["carrier"] == "Geodis"  # fields not sent are kept
    assert EmailMessage.select().count() == 1


def test_a_tracking_url_must_be_a_web_address(client, printer, released):
    code = released()
    resp = client.simulate_patch(f"{BASE}/{code}/delivery", headers=printer, json={"trackingUrl": "javascript:x"})
    assert resp.status_code == 400 and "trackingUrl" in resp.json["error"]["details"]["fields"]


def test_the_zip_holds_every_line_named_with_its_quantity(client, printer, released):
    code = released(per_face=True)
    resp = client.simulate_get(f"{BASE}/{code}/download", headers=printer)
    assert resp.status_code == 200 and resp.headers["content-type"] == "application/zip"
    assert int(resp.headers["content-length"]) == len(resp.content)
    assert f'filename="{code}.zip"' in resp.headers["content-disposition"]
    archive = zipfile.ZipFile(io.BytesIO(resp.content))
    names = archive.namelist()
    assert names == ["affiche-ete_qte2.pdf", "affiche-ete_2_qte1.pdf", "affiche-ete_3_qte1.pdf",
                     "affiche-ete_4_qte1.pdf", "affiche-ete_5_qte1.pdf"]
    assert all(archive.read(name) == PDF for name in names)


def test_an_order_without_files_has_no_download(client, printer, setting, released):
    code = released()
    from backend.printing.models import PrintOrderLine

    PrintOrderLine.update(asset_id=None).where(
        PrintOrderLine.order == PrintOrder.get(PrintOrder.code == code).id).execute()
    assert client.simulate_get(f"{BASE}/{code}/download", headers=printer).status_code == 404


def test_the_order_form_lists_quantities_and_total_panels(client, printer, released, seeded_templates):
    code = released(per_face=True)
    resp = client.simulate_get(f"{BASE}/{code}/bon-de-commande", headers=printer)
    assert resp.status_code == 200 and resp.headers["content-type"] == "application/pdf"
    text = " ".join(pdf_pages(resp.content))
    assert f"Bon de commande {code}" in text
    assert "affiche-ete_qte2.pdf" in text and "affiche-ete_5_qte1.pdf" in text
    assert "Joue, face 4" in text and "Nombre total de panneaux : 6" in text
    assert "1 rue A, 69001 Lyon" in text


def test_counters_count_batch_orders_on_the_dashboard_and_not_in_tabs(client, printer, released):
    codes = [released(), released()]
    orders.change_status(order_code=codes[1], printer_organization_id=PrintOrder.get(
        PrintOrder.code == codes[1]).printer_organization_id, next_status="sent", actor_user_id=None)
    data = client.simulate_get(f"{BASE}/counters", headers=printer).json["data"]
    assert PrinterCountersOut().validate(data) == {}
    assert (data["all"]["pending"], data["all"]["sent"], data["all"]["total"]) == (1, 1, 2)
    assert data["isolated"] == data["all"]  # no batch yet: every order is isolated


def test_the_csv_export_has_one_row_per_order(client, printer, released):
    codes = [released(), released(per_face=True)]
    resp = client.simulate_get(f"{BASE}/export.csv", headers=printer)
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/csv")
    text = resp.content.decode("utf-8")
    assert text.startswith("\ufeff")
    rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff")), delimiter=";"))
    assert rows[0][:4] == ["code", "statut", "statut (libellé)", "lot"]
    assert [r[0] for r in rows[1:]] == codes  # oldest first
    assert {(r[1], r[2], r[11]) for r in rows[1:]} == {("pending", "en attente de prise en charge", "6")}


def test_csv_cells_cannot_become_formulas(client, printer, setting, released):
    code = released()
    PrintOrder.update(carrier="=HYPERLINK(\"http://x\")").where(PrintOrder.code == code).execute()
    text = client.simulate_get(f"{BASE}/export.csv", headers=printer).content.decode("utf-8")
    assert "'=HYPERLINK" in text
