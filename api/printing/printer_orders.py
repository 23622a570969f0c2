"""Printer routes of spec B for print orders: list, counters, CSV export, detail, status steps,
delivery, ZIP of the visuals and the order form.

Every route requires the role `printer` and an active `printer:*` organization (403 otherwise);
every query filters on that organization, so another printer's order is 404 like an unknown one.
"""

from __future__ import annotations

from api.access import PRINTER, Route
from api.operations import operation
from api.requests import acting_organization
from api.responses import send_archive, send_pdf
from backend.db import with_connection
from backend.printing import delivery, order_views, orders
from backend.printing.archive import stream_archive
from backend.printing.export import csv_chunks
from backend.printing.order_form import render_order_form
from schemas.printing.orders import (
    DeliveryIn,
    PrinterCountersOut,
    PrinterOrdersQuery,
    PrinterPrintOrderDetailOut,
    PrinterPrintOrderListOut,
    StatusIn,
)

BASE = "/api/printer/print-orders"


class PrinterOrders:
    @operation(
        "Print orders of the connected printer organization (drafts excluded)",
        description=(
            "Most recently updated first. `scope=isolated` gives the orders without a batch (the "
            "order table of /printer/commandes), `scope=batch` the batch orders. Without `limit`, every "
            "order; `limit` and `offset` page it when given. The total count is in the `X-Total-Count` "
            "header, `data` is exactly `{orders}`. `status` takes one value or repeated keys."
        ),
        tags=("printer",),
        query=PrinterOrdersQuery,
        answer=PrinterPrintOrderListOut,
        answer_description="the orders with their lines (qualifiers hidden)",
    )
    def on_get(self, req, resp, query: dict) -> dict:
        views, total = order_views.printer_orders(
            printer_organization_id=acting_organization(req, "printer"), statuses=query["status"],
            scope=query["scope"], limit=query["limit"], offset=query["offset"],
        )
        resp.set_header("X-Total-Count", str(total))
        return {"orders": views}

    @operation(
        "Counters of the printer's orders per status",
        tags=("printer",),
        answer=PrinterCountersOut,
        answer_description="`all` (dashboard, batch orders included) and `isolated` (orders without a batch)",
    )
    def on_get_counters(self, req, resp) -> dict:
        return order_views.printer_counters(acting_organization(req, "printer"))

    @operation(
        "Every order of the printer as CSV (batch orders included)",
        description="UTF-8 with BOM, `;` separated, decimal comma; streamed.",
        tags=("printer",),
        produces="text/csv",
        answer_description="the CSV file",
    )
    def on_get_export(self, req, resp) -> None:
        views = order_views.printer_workload(acting_organization(req, "printer"))
        resp.content_type = "text/csv; charset=utf-8"
        resp.downloadable_as = "commandes-impression.csv"
        resp.stream = with_connection(csv_chunks(views))


class PrinterOrder:
    def __init__(self, deps) -> None:
        self.storage, self.config = deps.storage, deps.config

    def _detail(self, req, code: str) -> order_views.OrderView:
        return order_views.printer_order(order_code=code, printer_organization_id=acting_organization(req, "printer"))

    @operation(
        "One order of the printer",
        tags=("printer",),
        answer=PrinterPrintOrderDetailOut,
        answer_description="metadata, campaign, batch, lines, recipient and delivery information",
    )
    def on_get(self, req, resp, code: str) -> order_views.OrderView:
        return self._detail(req, code)

    @operation(
        "Next status (pending, sent, in_production, produced, delivered, one step at a time)",
        description="Any other step is 400 VALIDATION_ERROR with `currentStatus` and `requestedStatus`.",
        tags=("printer",),
        body=StatusIn,
        answer=PrinterPrintOrderDetailOut,
        answer_description="the order",
    )
    def on_patch_status(self, req, resp, code: str, body: dict) -> order_views.OrderView:
        orders.change_status(order_code=code, printer_organization_id=acting_organization(req, "printer"),
                             next_status=body["nextStatus"], actor_user_id=req.context.principal.user_id)
        return self._detail(req, code)

    @operation(
        "One step back along delivered, produced, in_production, sent, pending",
        tags=("printer",),
        answer=PrinterPrintOrderDetailOut,
        answer_description="the order",
    )
    def on_patch_rollback(self, req, resp, code: str) -> order_views.OrderView:
        orders.rollback_status(order_code=code, printer_organization_id=acting_organization(req, "printer"),
                               actor_user_id=req.context.principal.user_id)
        return self._detail(req, code)

    @operation(
        "Set carrier and tracking; `notifyIndustrial` e-mails the industrial",
        description="Only the fields sent change; null clears one. 409 CONFLICT on a cancelled order.",
        tags=("printer",),
        body=DeliveryIn,
        answer=PrinterPrintOrderDetailOut,
        answer_description="the order",
    )
    def on_patch_delivery(self, req, resp, code: str, body: dict) -> order_views.OrderView:
        notify = body.pop("notifyIndustrial")
        delivery.update_delivery(order_code=code, printer_organization_id=acting_organization(req, "printer"),
                                 changes=body, notify_industrial=notify)
        return self._detail(req, code)

    @operation(
        "The visuals of every line, named `<name>_qte<N>.<ext>`, streamed",
        description="404 NOT_FOUND when the order has no file.",
        tags=("printer",),
        produces="application/zip",
        answer_description="the archive",
    )
    def on_get_download(self, req, resp, code: str) -> None:
        view = order_views.printer_order(order_code=code, printer_organization_id=acting_organization(req, "printer"))
        send_archive(resp, stream_archive(self.storage, view.archive_files, filename=f"{code}.zip"))

    @operation(
        "The order form (bon de commande) with the quantity per line and the total panel count",
        tags=("printer",),
        produces="application/pdf",
        answer_description="the PDF",
    )
    def on_get_form(self, req, resp, code: str) -> None:
        view = order_views.printer_order(order_code=code, printer_organization_id=acting_organization(req, "printer"))
        send_pdf(resp, render_order_form(view, storage=self.storage, config=self.config),
                 f"bon-de-commande-{code}.pdf")


def routes(deps) -> list[Route]:
    collection, item = PrinterOrders(), PrinterOrder(deps)
    return [
        Route(BASE, collection, PRINTER),
        Route(f"{BASE}/counters", collection, PRINTER, suffix="counters"),
        Route(f"{BASE}/export.csv", collection, PRINTER, suffix="export"),
        Route(f"{BASE}/{{code}}", item, PRINTER),
        Route(f"{BASE}/{{code}}/status", item, PRINTER, suffix="status"),
        Route(f"{BASE}/{{code}}/status-rollback", item, PRINTER, suffix="rollback"),
        Route(f"{BASE}/{{code}}/delivery", item, PRINTER, suffix="delivery"),
        Route(f"{BASE}/{{code}}/download", item, PRINTER, suffix="download"),
        Route(f"{BASE}/{{code}}/bon-de-commande", item, PRINTER, suffix="form"),
    ]
