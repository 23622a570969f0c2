"""Print orders as printers and admins read them (spec B), and the bodies of their operations.

The answer schemas dump the views of `backend.printing.order_views` (`OrderView`, `LineView`)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend.printing.order_views import ADMIN_SORTS
from backend.printing.status import PRINTER_VISIBLE, PrintOrderStatus
from schemas.common import MAX_OFFSET, JsonBoolean, NestedAt, PageQuery, QueryList, UtcDateTime, page_of, sort_by

STATUSES = [s.value for s in PrintOrderStatus]
OPTIONAL_TEXT = {"load_default": None, "allow_none": True}


class PrintLineOut(Schema):
    position = fields.Integer(required=True)
    zoneId = fields.String(attribute="zone_id", required=True)
    zoneCode = fields.String(attribute="zone_code", required=True)
    zoneLabel = fields.String(attribute="zone_label", required=True)
    faceIndex = fields.Integer(attribute="face_index", required=True, allow_none=True,
                               metadata={"description": "null: one visual for the whole zone"})
    quantity = fields.Integer(required=True, metadata={"description": "panels to print, frozen at order time"})
    assetId = fields.String(attribute="asset_id", required=True, allow_none=True)
    fileName = fields.String(attribute="file_name", required=True, allow_none=True,
                             metadata={"description": "the file's name in the order's ZIP (`..._qte<N>.<ext>`)"})
    widthMm = fields.Integer(attribute="width_mm", required=True)
    heightMm = fields.Integer(attribute="height_mm", required=True)


class AdminPrintLineOut(PrintLineOut):
    qualifiers = fields.List(fields.String(), required=True,
                             metadata={"description": "position labels; admin only, never a count"})


class CampaignRefOut(Schema):
    id = fields.String(attribute="campaign_id", required=True)
    name = fields.String(attribute="campaign_name", required=True)


class IndustrialRefOut(Schema):
    id = fields.String(attribute="industrial_organization_id", required=True)
    name = fields.String(attribute="industrial_name", required=True)


class BatchRefOut(Schema):
    code = fields.String(required=True)
    campaignId = fields.String(attribute="campaign_id", required=True)


class DeliveryOut(Schema):
    carrier = fields.String(allow_none=True, required=True)
    trackingNumber = fields.String(attribute="tracking_number", allow_none=True, required=True)
    trackingUrl = fields.String(attribute="tracking_url", allow_none=True, required=True)


class RecipientOut(Schema):
    name = fields.String(required=True)
    street = fields.String(required=True)
    postalCode = fields.String(attribute="postal_code", required=True)
    city = fields.String(required=True)
    country = fields.String(required=True)
    formatted = fields.String(required=True)


class ReservationRefOut(Schema):
    id = fields.String(attribute="reservation_id", required=True)
    startsAt = UtcDateTime(attribute="reservation_starts_at", required=True)
    endsAt = UtcDateTime(attribute="reservation_ends_at", required=True)
    adSpaceName = fields.String(attribute="ad_space_name", required=True)


class PrinterPrintOrderListItemOut(Schema):
    code = fields.String(attribute="order.code", required=True, metadata={"example": "PM-0042"})
    status = fields.String(attribute="order.status", required=True,
                           metadata={"enum": [s.value for s in PRINTER_VISIBLE]})
    batchCode = fields.String(attribute="batch_code", required=True, allow_none=True,
                              metadata={"description": "the order's batch; null when the order is cancelled"})
    batchId = fields.String(attribute="order.batch_id", required=True, allow_none=True,
                            metadata={"description": "the batch that made the order (kept once cancelled); null "
                                                     "for a single deposit"})
    campaign = NestedAt(CampaignRefOut, source="order", required=True)
    industrialName = fields.String(attribute="order.industrial_name", required=True)
    storeName = fields.String(attribute="order.store_name", required=True)
    city = fields.String(attribute="order.store_city", required=True)
    deliveryTarget = fields.String(attribute="order.delivery_target", required=True,
                                   metadata={"enum": ["store", "single_address", "none"]})
    filesCount = fields.Integer(attribute="metrics.files_count", required=True,
                                metadata={"description": "distinct files = lines"})
    panelCount = fields.Integer(attribute="metrics.panel_count", required=True,
                                metadata={"description": "sum of line quantities"})
    totalSurfaceM2 = fields.Float(attribute="metrics.total_surface_m2", required=True,
                                  metadata={"description": "each line counted quantity times"})
    createdAt = UtcDateTime(attribute="order.created_at", required=True)
    updatedAt = UtcDateTime(attribute="order.updated_at", required=True)
    lines = fields.List(fields.Nested(PrintLineOut), required=True)


class PrinterPrintOrderListOut(Schema):
    orders = fields.List(fields.Nested(PrinterPrintOrderListItemOut), required=True)

    def dump(self, obj: dict, *, many: bool | None = None) -> dict:
        """The list's items come as plain values already (`order_views.printer_orders`): a printer
        may ask for its whole workload, however many orders, which field-by-field dumping made
        the dominant cost. The fields above document the answer; tests/printing/test_list_queries.py
        holds each item equal to `PrinterPrintOrderListItemOut`'s dump of the same order's view."""
        return {"orders": obj["orders"]}


class PrinterPrintOrderDetailOut(PrinterPrintOrderListItemOut):
    printOrderBatch = fields.Nested(BatchRefOut, attribute="batch", required=True, allow_none=True)
    industrial = NestedAt(IndustrialRefOut, source="order", required=True)
    reservation = NestedAt(ReservationRefOut, source="order", required=True)
    recipient = fields.Nested(RecipientOut, required=True, allow_none=True,
                              metadata={"description": "null when nothing is shipped (target none)"})
    delivery = NestedAt(DeliveryOut, source="order", required=True)


class AdminPrintOrderOut(PrinterPrintOrderDetailOut):
    lines = fields.List(fields.Nested(AdminPrintLineOut), required=True)
    reservationId = fields.String(attribute="order.reservation_id", required=True)
    printerOrganizationId = fields.String(attribute="order.printer_organization_id", required=True)
    printerName = fields.String(attribute="order.printer_name", required=True)
    cancelReason = fields.String(attribute="order.cancel_reason", required=True, allow_none=True)


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
    offset = fields.Integer(load_default=0, validate=validate.Range(min=0, max=MAX_OFFSET))


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
    sortBy = sort_by(ADMIN_SORTS, "createdAt")
    status = QueryList(fields.String(validate=validate.OneOf([s for s in STATUSES if s != "draft"])),
                       load_default=list, metadata={"description": "one value or repeated"})
    printerOrganizationId = fields.String(load_default=None)
    industrialOrganizationId = fields.String(load_default=None)
