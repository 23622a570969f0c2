"""Deposit of visuals by industrials (spec B): furniture templates, preflights, the single
deposit, stock declarations, and the impressions list. Shapes decided in docs/printing.md."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend.printing.impressions import SORTS as IMPRESSION_SORTS
from backend.printing.models import ImpressionStatus
from backend.printing.status import PrintOrderStatus
from schemas.common import ComputedBoolean, JsonBoolean, NestedAt, PageQuery, UtcDateTime, enum_of, page_of, sort_by
from schemas.printing.assets import PrintAssetOut
from schemas.printing.orders import DeliveryOut, PrintLineOut

IMPRESSION_STATUSES = [s.value for s in ImpressionStatus]
ZONE_ID = fields.String(required=True, validate=validate.Length(min=1, max=36))
FACE_INDEX = fields.Integer(load_default=None, allow_none=True, strict=True, validate=validate.Range(min=0, max=999),
                            metadata={"description": "0 .. faceQuantity - 1 for one face; null for the whole zone"})


class GabaritZoneOut(Schema):
    """A zone of a furniture configuration (`backend.printing.configuration.ConfigurationZone`)."""

    id = fields.String(required=True)
    code = fields.String(required=True)
    label = fields.String(required=True)
    faceQuantity = fields.Integer(attribute="face_quantity", required=True,
                                  metadata={"description": "panels of this zone per furniture"})
    printable = fields.Boolean(required=True)
    widthMm = fields.Integer(attribute="width_mm", required=True)
    heightMm = fields.Integer(attribute="height_mm", required=True)


class GabaritsOut(Schema):
    """A reservation's furniture: `{reservation, configuration}` as `reservation_configuration` gives them."""

    reservationId = fields.String(attribute="reservation.id", required=True)
    furnitureTypeId = fields.String(attribute="configuration.furniture_type_id", required=True)
    furnitureTypeVersionId = fields.String(attribute="configuration.version_id", required=True)
    name = fields.String(attribute="configuration.name", required=True)
    printableZoneCount = fields.Integer(attribute="configuration.printable_zone_count", required=True)
    zones = fields.List(fields.Nested(GabaritZoneOut), attribute="configuration.zones", required=True)


class SlotIn(Schema):
    zoneId = ZONE_ID
    faceIndex = FACE_INDEX


class PreflightFromAssetIn(SlotIn):
    assetId = fields.String(required=True, validate=validate.Length(min=1, max=36))


class PreflightUpload(Schema):
    """The multipart form of a preflight (parts in this order; the file is streamed)."""

    zoneId = fields.String(required=True)
    faceIndex = fields.String(validate=validate.Regexp(r"^([0-9]{1,9}|null)?$"),
                              metadata={"description": "a face number, or empty for the whole zone"})
    file = fields.Raw(required=True, metadata={"type": "string", "format": "binary"})


class PreflightOut(Schema):
    id = fields.String(required=True)
    zoneId = fields.String(attribute="zone_id", required=True)
    faceIndex = fields.Integer(attribute="face_index", required=True, allow_none=True)
    appliesToAllQualifiers = ComputedBoolean(lambda preflight: preflight.face_index is None, required=True,
                                             metadata={"description": "true when faceIndex is null"})
    asset = fields.Nested(PrintAssetOut, required=True)
    createdAt = UtcDateTime(attribute="created_at", required=True)


class PreflightAnswer(Schema):
    preflight = fields.Nested(PreflightOut, required=True)


class PreflightListOut(Schema):
    preflights = fields.List(fields.Nested(PreflightOut), required=True)


class DepositConfirmIn(Schema):
    confirmedFiles = fields.List(
        fields.Nested(SlotIn), required=True, validate=validate.Length(max=500),
        metadata={"description": "the slots whose preflight file is confirmed; no quantity (it comes from the "
                                 "configuration)"},
    )
    reuse = fields.List(fields.Nested(SlotIn), load_default=list, validate=validate.Length(max=500),
                        metadata={"description": "slots whose support is already in stock (a per-slot switch)"})


class PrintSupportIn(Schema):
    inStock = JsonBoolean(required=True, metadata={
        "description": "true: every printable face of the furniture is in stock (no order); false: withdraw it"})


class ReusedFaceOut(Schema):
    zoneId = fields.String(attribute="zone_id", required=True)
    faceIndex = fields.Integer(attribute="face_index", required=True)


class OrderRecapOut(Schema):
    """The active order of a deposit (`backend.printing.order_views.OrderView`), qualifiers hidden."""

    code = fields.String(attribute="order.code", required=True)
    status = fields.String(attribute="order.status", required=True, metadata=enum_of(PrintOrderStatus))
    batchCode = fields.String(attribute="batch_code", required=True, allow_none=True)
    batchId = fields.String(attribute="order.batch_id", required=True, allow_none=True)
    filesCount = fields.Integer(attribute="metrics.files_count", required=True)
    panelCount = fields.Integer(attribute="metrics.panel_count", required=True)
    totalSurfaceM2 = fields.Float(attribute="metrics.total_surface_m2", required=True)
    deliveryTarget = fields.String(attribute="order.delivery_target", required=True)
    delivery = NestedAt(DeliveryOut, source="order", required=True)
    lines = fields.List(fields.Nested(PrintLineOut), required=True, metadata={"description": "qualifiers hidden"})


class DepositOut(Schema):
    """A reservation's deposit (`backend.printing.deposits.DepositState`)."""

    reservationId = fields.String(attribute="reservation.id", required=True)
    impressionStatus = fields.String(attribute="impression_status", required=True, allow_none=True,
                                     metadata={"enum": IMPRESSION_STATUSES})
    supportMode = fields.String(attribute="reservation.print_support_mode", required=True, allow_none=True,
                                metadata={"enum": ["print", "hybrid", "reuse_all"]})
    printOrder = fields.Nested(OrderRecapOut, attribute="order", required=True, allow_none=True)
    reusedFaces = fields.List(fields.Nested(ReusedFaceOut), attribute="reused", required=True)


class ActionOut(Schema):
    code = fields.String(required=True, metadata={"enum": ["view_order", "manage_print"]})
    label = fields.String(required=True)


class ImpressionItemOut(Schema):
    """An approved reservation with its deposit status (`backend.printing.impressions.ImpressionItem`)."""

    reservationId = fields.String(attribute="reservation.id", required=True)
    campaignId = fields.String(attribute="reservation.campaign_id", required=True)
    campaignName = fields.String(attribute="reservation.campaign.name", required=True)
    industrialOrganizationId = fields.String(attribute="reservation.industrial_organization_id", required=True)
    industrialName = fields.String(attribute="reservation.industrial.legal_name", required=True)
    adSpaceName = fields.String(attribute="reservation.ad_space.name", required=True)
    storeName = fields.String(attribute="reservation.ad_space.store.name", required=True)
    city = fields.String(attribute="reservation.ad_space.store.city", required=True)
    startsAt = UtcDateTime(attribute="reservation.starts_at", required=True)
    endsAt = UtcDateTime(attribute="reservation.ends_at", required=True)
    impressionStatus = fields.String(attribute="impression_status", required=True,
                                     metadata={"enum": IMPRESSION_STATUSES})
    supportMode = fields.String(attribute="reservation.print_support_mode", required=True, allow_none=True)
    printableZoneCount = fields.Integer(attribute="printable_zone_count", required=True)
    printOrderCode = fields.String(attribute="order.code", dump_default=None, required=True, allow_none=True)
    printOrderStatus = fields.String(attribute="order.status", dump_default=None, required=True, allow_none=True,
                                     metadata=enum_of(PrintOrderStatus))
    batchCode = fields.String(attribute="order.batch_code", dump_default=None, required=True, allow_none=True)
    action = fields.Nested(ActionOut, required=True)
    route = fields.String(required=True, metadata={"description": "the page to open (batch wizard or single page)"})


ImpressionItemPage = page_of(ImpressionItemOut)


class ImpressionDetailOut(ImpressionItemOut):
    """`backend.printing.deposits.ImpressionDetail`."""

    deposit = fields.Nested(DepositOut, required=True)


class ImpressionsQuery(PageQuery):
    sortBy = sort_by(IMPRESSION_SORTS, "startsAt")
    campaignId = fields.String(load_default=None)
    impressionStatus = fields.String(load_default=None, validate=validate.OneOf(IMPRESSION_STATUSES))


class AdminDepositsQuery(PageQuery):
    sortBy = sort_by(IMPRESSION_SORTS, "updatedAt")
    impressionStatus = fields.String(load_default="in_review", validate=validate.OneOf(IMPRESSION_STATUSES))
