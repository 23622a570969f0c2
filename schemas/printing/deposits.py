"""Deposit of visuals by industrials (spec B): furniture templates, preflights, the single
deposit, stock declarations, and the impressions list. Shapes decided in docs/printing.md."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend.clock import iso
from backend.printing.configuration import Configuration
from backend.printing.deposits import DepositState
from backend.printing.impressions import ImpressionItem
from backend.printing.models import ImpressionStatus, PrintPreflight
from schemas.common import JsonBoolean, PageQuery, enveloped, page_of
from schemas.printing.assets import PrintAssetOut, asset_out
from schemas.printing.orders import DeliveryOut, PrintLineOut, line_out

IMPRESSION_STATUSES = [s.value for s in ImpressionStatus]
ZONE_ID = fields.String(required=True, validate=validate.Length(min=1, max=36))
FACE_INDEX = fields.Integer(load_default=None, allow_none=True, strict=True, validate=validate.Range(min=0, max=999),
                            metadata={"description": "0 .. faceQuantity - 1 for one face; null for the whole zone"})


class GabaritZoneOut(Schema):
    id = fields.String(required=True)
    code = fields.String(required=True)
    label = fields.String(required=True)
    faceQuantity = fields.Integer(required=True, metadata={"description": "panels of this zone per furniture"})
    printable = fields.Boolean(required=True)
    widthMm = fields.Integer(required=True)
    heightMm = fields.Integer(required=True)


class GabaritsOut(Schema):
    reservationId = fields.String(required=True)
    furnitureTypeId = fields.String(required=True)
    furnitureTypeVersionId = fields.String(required=True)
    name = fields.String(required=True)
    printableZoneCount = fields.Integer(required=True)
    zones = fields.List(fields.Nested(GabaritZoneOut), required=True)


class SlotIn(Schema):
    zoneId = ZONE_ID
    faceIndex = FACE_INDEX


class PreflightFromAssetIn(SlotIn):
    assetId = fields.String(required=True, validate=validate.Length(min=1, max=36))


class PreflightOut(Schema):
    id = fields.String(required=True)
    zoneId = fields.String(required=True)
    faceIndex = fields.Integer(required=True, allow_none=True)
    appliesToAllQualifiers = fields.Boolean(required=True, metadata={"description": "true when faceIndex is null"})
    asset = fields.Nested(PrintAssetOut, required=True)
    createdAt = fields.String(required=True)


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
    zoneId = fields.String(required=True)
    faceIndex = fields.Integer(required=True)


class OrderRecapOut(Schema):
    code = fields.String(required=True)
    status = fields.String(required=True)
    batchCode = fields.String(required=True, allow_none=True)
    filesCount = fields.Integer(required=True)
    panelCount = fields.Integer(required=True)
    totalSurfaceM2 = fields.Float(required=True)
    deliveryTarget = fields.String(required=True)
    delivery = fields.Nested(DeliveryOut, required=True)
    lines = fields.List(fields.Nested(PrintLineOut), required=True, metadata={"description": "qualifiers hidden"})


class DepositOut(Schema):
    reservationId = fields.String(required=True)
    impressionStatus = fields.String(required=True, allow_none=True, metadata={"enum": IMPRESSION_STATUSES})
    supportMode = fields.String(required=True, allow_none=True, metadata={"enum": ["print", "hybrid", "reuse_all"]})
    printOrder = fields.Nested(OrderRecapOut, required=True, allow_none=True)
    reusedFaces = fields.List(fields.Nested(ReusedFaceOut), required=True)


class ActionOut(Schema):
    code = fields.String(required=True, metadata={"enum": ["view_order", "manage_print"]})
    label = fields.String(required=True)


class ImpressionItemOut(Schema):
    reservationId = fields.String(required=True)
    campaignId = fields.String(required=True)
    campaignName = fields.String(required=True)
    industrialOrganizationId = fields.String(required=True)
    industrialName = fields.String(required=True)
    adSpaceName = fields.String(required=True)
    storeName = fields.String(required=True)
    city = fields.String(required=True)
    startsAt = fields.String(required=True)
    endsAt = fields.String(required=True)
    impressionStatus = fields.String(required=True, metadata={"enum": IMPRESSION_STATUSES})
    supportMode = fields.String(required=True, allow_none=True)
    printableZoneCount = fields.Integer(required=True)
    printOrderCode = fields.String(required=True, allow_none=True)
    printOrderStatus = fields.String(required=True, allow_none=True)
    batchCode = fields.String(required=True, allow_none=True)
    action = fields.Nested(ActionOut, required=True)
    route = fields.String(required=True, metadata={"description": "the page to open (batch wizard or single page)"})


ImpressionItemPage = page_of(ImpressionItemOut)


class ImpressionDetailOut(ImpressionItemOut):
    deposit = fields.Nested(DepositOut, required=True)


class ImpressionsQuery(PageQuery):
    campaignId = fields.String(load_default=None)
    impressionStatus = fields.String(load_default=None, validate=validate.OneOf(IMPRESSION_STATUSES))


class AdminDepositsQuery(PageQuery):
    impressionStatus = fields.String(load_default="in_review", validate=validate.OneOf(IMPRESSION_STATUSES))


GabaritsOutEnvelope = enveloped(GabaritsOut, "GabaritsOutEnvelope")
PreflightAnswerEnvelope = enveloped(PreflightAnswer, "PreflightAnswerEnvelope")
PreflightListOutEnvelope = enveloped(PreflightListOut, "PreflightListOutEnvelope")
DepositOutEnvelope = enveloped(DepositOut, "DepositOutEnvelope")
ImpressionItemPageEnvelope = enveloped(ImpressionItemPage, "ImpressionItemPageEnvelope")
ImpressionDetailOutEnvelope = enveloped(ImpressionDetailOut, "ImpressionDetailOutEnvelope")


def gabarits_out(reservation_id: str, configuration: Configuration) -> dict:
    return {
        "reservationId": reservation_id, "furnitureTypeId": configuration.furniture_type_id,
        "furnitureTypeVersionId": configuration.version_id, "name": configuration.name,
        "printableZoneCount": configuration.printable_zone_count,
        "zones": [{"id": z.id, "code": z.code, "label": z.label, "faceQuantity": z.face_quantity,
                   "printable": z.printable, "widthMm": z.width_mm, "heightMm": z.height_mm}
                  for z in configuration.zones],
    }


def preflight_out(preflight: PrintPreflight) -> dict:
    return {
        "id": preflight.id, "zoneId": preflight.zone_id, "faceIndex": preflight.face_index,
        "appliesToAllQualifiers": preflight.face_index is None, "asset": asset_out(preflight.asset),
        "createdAt": iso(preflight.created_at),
    }


def deposit_out(state: DepositState) -> dict:
    view = state.order
    recap = None
    if view is not None:
        order = view.order
        recap = {
            "code": order.code, "status": order.status, "batchCode": view.batch_code,
            "filesCount": view.metrics.files_count, "panelCount": view.metrics.panel_count,
            "totalSurfaceM2": view.metrics.total_surface_m2, "deliveryTarget": order.delivery_target,
            "delivery": {"carrier": order.carrier, "trackingNumber": order.tracking_number,
                         "trackingUrl": order.tracking_url},
            "lines": [line_out(line) for line in view.lines],
        }
    return {
        "reservationId": state.reservation.id, "impressionStatus": state.impression_status,
        "supportMode": state.reservation.print_support_mode, "printOrder": recap,
        "reusedFaces": [{"zoneId": r.zone_id, "faceIndex": r.face_index} for r in state.reused],
    }


def impression_item_out(item: ImpressionItem) -> dict:
    reservation, order = item.reservation, item.order
    code, label = item.action
    return {
        "reservationId": reservation.id, "campaignId": reservation.campaign_id,
        "campaignName": reservation.campaign.name,
        "industrialOrganizationId": reservation.industrial_organization_id,
        "industrialName": reservation.industrial.legal_name, "adSpaceName": reservation.ad_space.name,
        "storeName": reservation.ad_space.store.name, "city": reservation.ad_space.store.city,
        "startsAt": iso(reservation.starts_at), "endsAt": iso(reservation.ends_at),
        "impressionStatus": item.impression_status, "supportMode": reservation.print_support_mode,
        "printableZoneCount": item.printable_zone_count,
        "printOrderCode": order.code if order else None, "printOrderStatus": order.status if order else None,
        "batchCode": order.batch_code if order else None,
        "action": {"code": code, "label": label}, "route": item.route,
    }
