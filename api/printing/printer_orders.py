"""Printer routes of spec B for print orders: list, counters, CSV export, detail, status steps,
delivery, ZIP of the visuals and the order form.

Every route requires the role `printer` and an active `printer:*` organization (403 otherwise);
every query filters on that organization, so another printer's order is 404 like an unknown one.
"""

from __future__ import annotations

from api.access import roles
from api.marketplace.catalog import acting_organization
from api.responses import load, send
from api.routes import Route
from backend.db import with_connection
from backend.printing import delivery, order_views, orders
from backend.printing.archive import stream_archive
from backend.printing.export import csv_chunks
from backend.printing.order_form import render_order_form
from schemas.printing.orders import (
    DeliveryIn,
    PrinterOrdersQuery,
    StatusIn,
    order_detail_out,
    order_list_item_out,
)

BASE = "/api/printer/print-orders"
PRINTER = roles("printer")


def printer_organization(req) -> str:
    """The caller's active printer organization (403 unless `printer:*`)."""
    return acting_organization(req, "printer")


def send_pdf(resp, pdf: bytes, filename: str) -> None:
    resp.content_type = "application/pdf"
    resp.downloadable_as = filename
    resp.data = pdf


def send_archive(resp, archive) -> None:
    resp.content_type = archive.content_type
    resp.downloadable_as = archive.filename
    resp.content_length = archive.content_length
    resp.stream = archive.chunks


class PrinterOrders:
    def on_get(self, req, resp) -> None:
        """The printer's orders.
        ---
        summary: Print orders of the connected printer organization (drafts excluded)
        description: >
          Most recently updated first. `scope=isolated` gives the orders without a batch (the order table
          of /printer/commandes), `scope=batch` the batch orders. Without `limit`, every order; `limit`
          and `offset` page it when given. The total count is in the `X-Total-Count` header, `data`
          is exactly `{orders}`. `status` takes one value or repeated keys.
        tags: [printer]
        parameters:
          - in: query
            schema: PrinterOrdersQuery
        responses:
          200:
            description: the orders with their lines (qualifiers hidden)
            content:
              application/json:
                schema: PrinterPrintOrderListOutEnvelope
        """
        query = PrinterOrdersQuery().load(req.params)
        views, total = order_views.printer_orders(
            printer_organization_id=printer_organization(req), statuses=query["status"], scope=query["scope"],
            limit=query["limit"], offset=query["offset"],
        )
        resp.set_header("X-Total-Count", str(total))
        send(resp, {"orders": [order_list_item_out(view) for view in views]})

    def on_get_counters(self, req, resp) -> None:
        """Order counters per status.
        ---
        summary: Counters of the printer's orders per status
        tags: [printer]
        responses:
          200:
            description: "`all` (dashboard, batch orders included) and `isolated` (orders without a batch)"
            content:
              application/json:
                schema: PrinterCountersOutEnvelope
        """
        send(resp, order_views.printer_counters(printer_organization(req)))

    def on_get_export(self, req, resp) -> None:
        """The full workload as CSV.
        ---
        summary: Every order of the printer as CSV (batch orders included)
        description: UTF-8 with BOM, `;` separated, decimal comma; streamed.
        tags: [printer]
        responses:
          200:
            description: the CSV file
            content:
              text/csv:
                schema:
                  type: string
        """
        views = order_views.printer_workload(printer_organization(req))
        resp.content_type = "text/csv; charset=utf-8"
        resp.downloadable_as = "commandes-impression.csv"
        resp.stream = with_connection(csv_chunks(views))


class PrinterOrder:
    def __init__(self, deps) -> None:
        self.storage, self.config = deps.storage, deps.config

    def _detail(self, req, code: str) -> dict:
        view = order_views.printer_order(order_code=code, printer_organization_id=printer_organization(req))
        return order_detail_out(view)

    def on_get(self, req, resp, code: str) -> None:
        """Order detail.
        ---
        summary: One order of the printer
        tags: [printer]
        responses:
          200:
            description: metadata, campaign, batch, lines, recipient and delivery information
            content:
              application/json:
                schema: PrinterPrintOrderDetailOutEnvelope
        """
        send(resp, self._detail(req, code))

    def on_patch_status(self, req, resp, code: str) -> None:
        """Move forward one step.
        ---
        summary: Next status (pending, sent, in_production, produced, delivered, one step at a time)
        description: Any other step is 400 VALIDATION_ERROR with `currentStatus` and `requestedStatus`.
        tags: [printer]
        requestBody:
          content:
            application/json:
              schema: StatusIn
        responses:
          200:
            description: the order
            content:
              application/json:
                schema: PrinterPrintOrderDetailOutEnvelope
        """
        body = load(req, StatusIn())
        orders.change_status(order_code=code, printer_organization_id=printer_organization(req),
                             next_status=body["nextStatus"], actor_user_id=req.context.principal.user_id)
        send(resp, self._detail(req, code))

    def on_patch_rollback(self, req, resp, code: str) -> None:
        """Move back one step.
        ---
        summary: One step back along delivered, produced, in_production, sent, pending
        tags: [printer]
        responses:
          200:
            description: the order
            content:
              application/json:
                schema: PrinterPrintOrderDetailOutEnvelope
        """
        orders.rollback_status(order_code=code, printer_organization_id=printer_organization(req),
                               actor_user_id=req.context.principal.user_id)
        send(resp, self._detail(req, code))

    def on_patch_delivery(self, req, resp, code: str) -> None:
        """Delivery information.
        ---
        summary: Set carrier and tracking; `notifyIndustrial` e-mails the industrial
        description: Only the fields sent change; null clears one. 409 CONFLICT on a cancelled order.
        tags: [printer]
        requestBody:
          content:
            application/json:
              schema: DeliveryIn
        responses:
          200:
            description: the order
            content:
              application/json:
                schema: PrinterPrintOrderDetailOutEnvelope
        """
        body = load(req, DeliveryIn())
        notify = body.pop("notifyIndustrial")
        delivery.update_delivery(order_code=code, printer_organization_id=printer_organization(req), changes=body,
                                 notify_industrial=notify)
        send(resp, self._detail(req, code))

    def on_get_download(self, req, resp, code: str) -> None:
        """ZIP of the order's visuals.
        ---
        summary: The visuals of every line, named `<name>_qte<N>.<ext>`, streamed
        description: 404 NOT_FOUND when the order has no file.
        tags: [printer]
        responses:
          200:
            description: the archive
            content:
              application/zip:
                schema:
                  type: string
                  format: binary
        """
        view = order_views.printer_order(order_code=code, printer_organization_id=printer_organization(req))
        send_archive(resp, stream_archive(self.storage, view.archive_files, filename=f"{code}.zip"))

    def on_get_form(self, req, resp, code: str) -> None:
        """Order form PDF.
        ---
        summary: The order form (bon de commande) with the quantity per line and the total panel count
        tags: [printer]
        responses:
          200:
            description: the PDF
            content:
              application/pdf:
                schema:
                  type: string
                  format: binary
        """
        view = order_views.printer_order(order_code=code, printer_organization_id=printer_organization(req))
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
