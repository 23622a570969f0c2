"""Order forms (bons de commande), rendered through the templates service: a print order's
(`print_order_form`: one row per line with its file name in the ZIP, zone, format and quantity,
then the total panel count and surface) and a batch's (`print_batch_order_form`: the aggregated
files with the batch totals of the ZIP, then the delivery manifest per order)."""

from __future__ import annotations

from backend.config import Config
from backend.documents.rendering import render_document
from backend.printing.allocation import face_label
from backend.printing.batch_views import BatchView, manifest
from backend.printing.delivery import STATUS_LABELS
from backend.printing.order_views import OrderView
from backend.printing.plans import formatted_address
from backend.printing.status import PrintOrderStatus
from storage import Storage

TEMPLATE_KEY = "print_order_form"
NOTHING_SHIPPED = "Aucune expédition : les supports restent chez l'imprimeur"


def zone_label(zone_label: str, face_index: int | None) -> str:
    return zone_label if face_index is None else f"{zone_label}, {face_label(face_index)}"


def order_form_context(view: OrderView) -> dict:
    order = view.order
    return {
        "orderCode": order.code,
        "orderDate": order.created_at.date().isoformat(),
        "printerName": order.printer_name,
        "industrialName": order.industrial_name,
        "campaignName": order.campaign_name,
        "storeName": order.recipient_name or order.store_name,
        "deliveryAddress": formatted_address(order) or NOTHING_SHIPPED,
        "lines": [
            {"fileName": line.file_name or "—", "zoneLabel": zone_label(line.zone_label, line.face_index),
             "widthMm": line.width_mm, "heightMm": line.height_mm, "quantity": line.quantity}
            for line in view.lines
        ],
        "panelCount": view.metrics.panel_count,
        "totalSurfaceM2": view.metrics.total_surface_m2,
    }


def render_order_form(view: OrderView, *, storage: Storage, config: Config) -> bytes:
    return render_document(TEMPLATE_KEY, order_form_context(view), storage=storage, config=config)


BATCH_TEMPLATE_KEY = "print_batch_order_form"
DELIVERY_LABELS = {
    "store": "Livraison en magasin (une adresse par commande)",
    "single_address": "Livraison groupée à une seule adresse",
    "none": "Aucune expédition",
}


CANCELLED_NOTICE = "ANNULÉE : ne pas imprimer ni expédier"


def batch_order_form_context(view: BatchView) -> dict:
    """Two levels: the aggregated files (the ZIP's names), then the manifest per order.

    A cancelled order stays in the manifest (spec B), marked `ANNULÉE`, and counts in no total:
    the recap's quantities, the order count and the panel count are those of the live orders, so a
    printer working from the PDF never prints or ships for a cancelled store."""
    batch = view.batch
    entries = manifest(view)
    live = [e for e in entries if e["status"] != PrintOrderStatus.CANCELLED]
    to_print: dict[str, int] = {}
    for entry in live:
        for file in entry["files"]:
            to_print[file["fileName"]] = to_print.get(file["fileName"], 0) + file["quantity"]
    return {
        "batchCode": batch.code,
        "orderDate": (batch.sent_at or batch.created_at).date().isoformat(),
        "printerName": view.orders[0].order.printer_name if view.orders else "",
        "industrialName": batch.industrial_name,
        "campaignName": batch.campaign_name,
        "deliveryLabel": DELIVERY_LABELS.get(batch.delivery_target, batch.delivery_target),
        "ordersCount": len(live),
        "cancelledCount": len(entries) - len(live),
        "panelCount": sum(e["panels"] for e in live),
        "files": [{"fileName": f.file_name, "zoneLabel": f.zone_label, "widthMm": f.width_mm,
                   "heightMm": f.height_mm, "quantity": to_print.get(f.file_name, 0)} for f in view.files],
        "manifest": [
            {"code": entry["code"], "storeName": entry["storeName"], "address": entry["address"] or NOTHING_SHIPPED,
             "panels": entry["panels"], "files": entry["files"],
             "cancelled": entry["status"] == PrintOrderStatus.CANCELLED,
             "statusLabel": (CANCELLED_NOTICE if entry["status"] == PrintOrderStatus.CANCELLED
                             else STATUS_LABELS.get(entry["status"], entry["status"]))}
            for entry in entries
        ],
    }


def render_batch_order_form(view: BatchView, *, storage: Storage, config: Config) -> bytes:
    return render_document(BATCH_TEMPLATE_KEY, batch_order_form_context(view), storage=storage, config=config)
