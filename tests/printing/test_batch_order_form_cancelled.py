"""The batch order form marks cancelled orders and keeps them out of the recap totals, so a printer
working from the PDF never prints or ships for a cancelled store."""

from __future__ import annotations

from backend.printing.orders import cancel_order
from tests.documents.conftest import pdf_pages
from tests.factories import make_admin


def test_the_batch_order_form_marks_cancelled_orders_and_leaves_them_out_of_the_totals(
        client, member, printer, group, seeded_templates):
    batch_id, ids = group(3)
    data = client.simulate_post(f"/api/print-batches/{batch_id}/confirm", headers=member, json={
        "reservationIds": ids, "delivery": {"target": "store"}}).json["data"]
    code, cancelled = data["batch"]["code"], data["orders"][0]["code"]
    cancel_order(order_code=cancelled, reason="magasin fermé", actor_user_id=make_admin().id)
    resp = client.simulate_get(f"/api/printer/print-batches/{code}/bon-de-commande", headers=printer)
    assert resp.status_code == 200
    text = " ".join(" ".join(pdf_pages(resp.content)).split())
    assert "Nombre total de panneaux du lot : 12" in text  # 2 live orders of 6 panels, not 18
    assert "Commandes à produire 2 Commandes annulées 1" in text
    assert "visuel_qte6.pdf Fronton 1 000 \u00d7 300 4" in text  # the ZIP file, without the cancelled order
    manifest = text[text.index("Manifeste"):]
    assert f"{cancelled} — Magasin Lyon — ANNULÉE : ne pas imprimer ni expédier" in manifest
    assert f"{data['orders'][1]['code']} — Magasin Lyon — en attente de prise en charge" in manifest
