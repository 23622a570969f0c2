"""Print orders as printers and admins read them (spec B), and the bodies of their operations.

Answers are built by the `*_out` functions (plain dicts: a printer's page holds hundreds of lines
and marshmallow's dump would dominate its cost); the schema classes document the same shapes in
the OpenAPI document, and the tests validate answers against them.
"""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend.clock import iso
from backend.printing.order_views import LineView, OrderView
from backend.printing.plans import formatted_address
from backend.printing.status import PRINTER_VISIBLE, PrintOrderStatus
from schemas.common import JsonBoolean, PageQuery, QueryList
from schemas.marketplace.catalog import enveloped, page_of

STATUSES = [s.value for s in PrintOrderStatus]
OPTIONAL_TEXT = {"load_default": None, "allow_none": True}


class PrintLineOut(Schema):
    position = fields.Integer(required=True)
    zoneId = fields.String(required=True)
    zoneCode = fields.String(required=True)
    zoneLabel = fields.String(required=True)
    faceIndex = fields.Integer(required=True, allow_none=True,
                               metadata={"description": "null: one visual for the whole zone"})
    quantity = fields.Integer(required=True, metadata={"description": "panels to print, frozen at order time"})
    assetId = fields.String(required=True, allow_none=True)
    fileName = fields.String(required=True, allow_none=True,
                             metadata={"description": "the file's name in the order's ZIP (`..._qte<N>.<ext>`)"})
    widthMm = fields.Integer(required=True)
    heightMm = fields.Integer(required=True)


class AdminPrintLineOut(PrintLineOut):
    qualifiers = fields.List(fields.String(), required=True,
                             metadata={"description": "position labels; admin only, never a count"})


class IdName(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)


class BatchRefOut(Schema):
    code = fields.String(required=True)
    campaignId = fields.String(required=True)


class DeliveryOut(Schema):
    carrier = fields.String(allow_none=True, required=True)
    trackingNumber = fields.String(allow_none=True, required=True)
    trackingUrl = fields.String(allow_none=True, required=True)


class RecipientOut(Schema):
    name = fields.String(required=True)
    street = fields.String(required=True)
    postalCode = fields.String(required=True)
    city = fields.String(required=True)
    country = fields.String(required=True)
    formatted = fields.String(required=True)


class PrinterPrintOrderListItemOut(Schema):
    code = fields.String(required=True, metadata={"example": "PM-0042"})
    status = fields.String(required=True, metadata={"enum": [s.value for s in PRINTER_VISIBLE]})
    batchCode = fields.String(required=True, allow_none=True,
                              metadata={"description": "the order's batch; null when the order is cancelled"})
    campaign = fields.Nested(IdName, required=True)
    industrialName = fields.String(required=True)
    storeName = fields.String(required=True)
    city = fields.String(required=True)
    deliveryTarget = fields.String(required=True, metadata={"enum": ["store", "single_address", "none"]})
    filesCount = fields.Integer(required=True, metadata={"description": "distinct files = lines"})
    panelCount = fields.Integer(required=True, metadata={"description": "sum of line quantities"})
    totalSurfaceM2 = fields.Float(required=True, metadata={"description": "each line counted quantity times"})
    createdAt = fields.String(required=True)
    updatedAt = fields.String(required=True)
    lines = fields.List(fields.Nested(PrintLineOut), required=True)


class PrinterPrintOrderListOut(Schema):
    orders = fields.List(fields.Nested(PrinterPrintOrderListItemOut), required=True)


class PrinterPrintOrderDetailOut(PrinterPrintOrderListItemOut):
    printOrderBatch = fields.Nested(BatchRefOut, required=True, allow_none=True)
    industrial = fields.Nested(IdName, required=True)
    reservation = fields.Dict(required=True, metadata={"description": "{id, startsAt, endsAt, adSpaceName}"})
    recipient = fields.Nested(RecipientOut, required=True, allow_none=True,
                              metadata={"description": "null when nothing is shipped (target none)"})
    delivery = fields.Nested(DeliveryOut, required=True)


class AdminPrintOrderOut(PrinterPrintOrderDetailOut):
    lines = fields.List(fields.Nested(AdminPrintLineOut), required=True)
    reservationId = fields.String(required=True)
    printerOrganizationId = fields.String(required=True)
    printerName = fields.String(required=True)
    cancelReason = fields.String(required=True, allow_none=True)


AdminPrintOrderPage = page_of(AdminPrintOrderOut)


class StatusCountersOut(Schema):
    pending = fields.Integer(required=True)
    sent = fields.Integer(required=True)
    in_production = fields.Integer(required=True)
    produced = fields.Integer(required=True)
    delivered = fields.Integer(required=True)
    cancelled = fields.Integer(required=True)
    total = fields.Integer(required=True)


class PrinterCountersOut(Schema):
    all = fields.Nested(StatusCountersOut, required=True,
                        metadata={"description": "every order, batch orders included (dashboard)"})
    isolated = fields.Nested(StatusCountersOut, required=True,
                             metadata={"description": "orders without a batch (tab counters of /printer/commandes)"})


class PrinterOrdersQuery(Schema):
    status = QueryList(fields.String(validate=validate.OneOf([s.value for s in PRINTER_VISIBLE])),
                       load_default=list, metadata={"description": "one value or repeated; empty means every status"})
    scope = fields.String(load_default="all", validate=validate.OneOf(["all", "isolated", "batch"]),
                          metadata={"description": "`isolated`: orders with no batch; `batch`: batch orders"})
    limit = fields.Integer(load_default=None, validate=validate.Range(min=1),
                           metadata={"description": "optional; without it, every order"})
    offset = fields.Integer(load_default=0, validate=validate.Range(min=0))


class StatusIn(Schema):
    nextStatus = fields.String(required=True, metadata={"enum": STATUSES})


class DeliveryIn(Schema):
    carrier = fields.String(validate=validate.Length(max=120), allow_none=True)
    trackingNumber = fields.String(validate=validate.Length(max=120), allow_none=True)
    trackingUrl = fields.Url(schemes={"http", "https"}, validate=validate.Length(max=2000), allow_none=True)
    notifyIndustrial = JsonBoolean(load_default=False)


class CancelIn(Schema):
    reason = fields.String(required=True, validate=validate.Length(min=1, max=2000))


class AdminPrintOrdersQuery(PageQuery):
    status = QueryList(fields.String(validate=validate.OneOf([s for s in STATUSES if s != "draft"])),
                       load_default=list, metadata={"description": "one value or repeated"})
    printerOrganizationId = fields.String(load_default=None)
    industrialOrganizationId = fields.String(load_default=None)


PrinterPrintOrderListOutEnvelope = enveloped(PrinterPrintOrderListOut)
PrinterPrintOrderDetailOutEnvelope = enveloped(PrinterPrintOrderDetailOut)
PrinterCountersOutEnvelope = enveloped(PrinterCountersOut)
AdminPrintOrderOutEnvelope = enveloped(AdminPrintOrderOut)
AdminPrintOrderPageEnvelope = enveloped(AdminPrintOrderPage)


def line_out(line: LineView, *, qualifiers: bool = False) -> dict:
    out = {
        "position": line.position, "zoneId": line.zone_id, "zoneCode": line.zone_code, "zoneLabel": line.zone_label,
        "faceIndex": line.face_index, "quantity": line.quantity, "assetId": line.asset_id,
        "fileName": line.file_name, "widthMm": line.width_mm, "heightMm": line.height_mm,
    }
    if qualifiers:
        out["qualifiers"] = line.qualifiers
    return out


def order_list_item_out(view: OrderView, *, qualifiers: bool = False) -> dict:
    order = view.order
    return {
        "code": order.code, "status": order.status, "batchCode": view.batch_code,
        "campaign": {"id": order.campaign_id, "name": order.campaign_name},
        "industrialName": order.industrial_name, "storeName": order.store_name, "city": order.store_city,
        "deliveryTarget": order.delivery_target, "filesCount": view.metrics.files_count,
        "panelCount": view.metrics.panel_count, "totalSurfaceM2": view.metrics.total_surface_m2,
        "createdAt": iso(order.created_at), "updatedAt": iso(order.updated_at),
        "lines": [line_out(line, qualifiers=qualifiers) for line in view.lines],
    }


def recipient_out(view: OrderView) -> dict | None:
    order = view.order
    formatted = formatted_address(order)
    if formatted is None:
        return None
    return {"name": order.recipient_name, "street": order.recipient_street, "postalCode": order.recipient_postal_code,
            "city": order.recipient_city, "country": order.recipient_country, "formatted": formatted}


def order_detail_out(view: OrderView, *, qualifiers: bool = False) -> dict:
    order = view.order
    batch = None if view.batch_code is None else {"code": view.batch_code, "campaignId": order.batch_campaign_id}
    return {
        **order_list_item_out(view, qualifiers=qualifiers),
        "printOrderBatch": batch,
        "industrial": {"id": order.industrial_organization_id, "name": order.industrial_name},
        "reservation": {"id": order.reservation_id, "startsAt": iso(order.reservation_starts_at),
                        "endsAt": iso(order.reservation_ends_at), "adSpaceName": order.ad_space_name},
        "recipient": recipient_out(view),
        "delivery": {"carrier": order.carrier, "trackingNumber": order.tracking_number,
                     "trackingUrl": order.tracking_url},
    }


def admin_order_out(view: OrderView) -> dict:
    order = view.order
    return {
        **order_detail_out(view, qualifiers=True), "reservationId": order.reservation_id,
        "printerOrganizationId": order.printer_organization_id, "printerName": order.printer_name,
        "cancelReason": order.cancel_reason,
    }
