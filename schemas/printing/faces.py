"""The admin "faces" list: every face of every ad space with its reservation and visual (dumped
from `backend.printing.faces.Face`)."""

from __future__ import annotations

from marshmallow import Schema, fields

from backend.marketplace.models import ReservationStatus
from backend.printing.faces import FACE_SORTS
from backend.printing.models import ImpressionStatus
from backend.printing.status import PrintOrderStatus
from schemas.common import PageQuery, UtcDateTime, enum_of, page_of, sort_by


class FaceStoreOut(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    city = fields.String(required=True)


class FaceAdSpaceOut(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)


class FaceFurnitureTypeOut(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    version = fields.Integer(required=True, metadata={"description": "the current version, whose zones are listed"})


class FaceZoneOut(Schema):
    id = fields.String(required=True)
    code = fields.String(required=True)
    label = fields.String(required=True)
    printable = fields.Boolean(required=True)
    faceQuantity = fields.Integer(attribute="face_quantity", required=True)
    widthMm = fields.Integer(attribute="width_mm", required=True)
    heightMm = fields.Integer(attribute="height_mm", required=True)


class FaceReservationOut(Schema):
    id = fields.String(required=True)
    status = fields.String(required=True, metadata=enum_of(ReservationStatus))
    startsAt = UtcDateTime(attribute="starts_at", required=True)
    endsAt = UtcDateTime(attribute="ends_at", required=True)
    industrialOrganizationId = fields.String(attribute="industrial_organization_id", required=True)
    impressionStatus = fields.String(attribute="impression_status", allow_none=True,
                                     metadata={**enum_of(ImpressionStatus),
                                               "description": "the deposit status (spec B)"})


class FaceVisualOut(Schema):
    assetId = fields.String(attribute="asset_id", required=True)
    name = fields.String(allow_none=True, metadata={"description": "the visual's original file name"})
    wholeZone = fields.Boolean(attribute="whole_zone", required=True,
                               metadata={"description": "one file deposited for every face of the zone"})
    printOrderCode = fields.String(attribute="print_order_code", required=True)
    printOrderStatus = fields.String(attribute="print_order_status", required=True, metadata=enum_of(PrintOrderStatus))


class FaceOut(Schema):
    id = fields.String(required=True, metadata={"description": "`<adSpaceId>/<zoneId>/<faceIndex on 4 digits>`"})
    store = fields.Nested(FaceStoreOut, required=True)
    adSpace = fields.Nested(FaceAdSpaceOut, attribute="ad_space", required=True)
    furnitureType = fields.Nested(FaceFurnitureTypeOut, attribute="furniture_type", required=True)
    zone = fields.Nested(FaceZoneOut, required=True)
    faceIndex = fields.Integer(attribute="face_index", required=True, metadata={"description": "from 1"})
    reservation = fields.Nested(FaceReservationOut, allow_none=True, required=True, metadata={
        "description": "the approved or completed reservation running now, else the next one; null when none"})
    visual = fields.Nested(FaceVisualOut, allow_none=True, required=True, metadata={
        "description": "the visual deposited for this face on the reservation's active print order (drafts in "
                       "review included); null when none"})
    supportReused = fields.Boolean(attribute="support_reused", required=True,
                                   metadata={"description": "the deposit declared this face's support in stock"})


class FacesQuery(PageQuery):
    sortBy = sort_by(FACE_SORTS, "store")
    storeId = fields.String(load_default=None)
    deposited = fields.Boolean(load_default=None, metadata={"description": "true: faces with a visual; false: without"})


FacesPage = page_of(FaceOut, "Faces")
