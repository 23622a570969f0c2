"""Print batches (spec B): the industrial's groups, drafts, preview and confirmation; the
printer's and industrial's views of sent batches; the batch status advance. Shapes decided in
docs/printing.md; each answer schema dumps the view `backend.printing` gives (named in its docstring)."""

from __future__ import annotations

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from backend.printing.allocation import Slot
from backend.printing.batch_preview import BatchDeposit, Reuse
from backend.printing.batch_selection import Delivery, Exclusion
from backend.printing.batch_state import MIXED
from backend.printing.batch_views import status_of
from backend.printing.impressions import shown_impression_status
from backend.printing.models import DeliveryTarget, ImpressionStatus
from backend.printing.plans import Recipient
from backend.printing.status import PrintOrderStatus
from schemas.common import ComputedInteger, ComputedString, LegalText, UtcDateTime, enum_of
from schemas.printing.deposits import ZONE_ID, GabaritZoneOut, PreflightOut, SlotIn
from schemas.printing.orders import PrinterPrintOrderListItemOut

MAX_SELECTION = 2_000  # spec B targets batches of up to 1,000 stores


class DeliveryAddressIn(Schema):
    name = LegalText(200, required=True)
    street = LegalText(200, required=True)
    postalCode = LegalText(20, required=True)
    city = LegalText(120, required=True)
    country = fields.String(load_default="FR", validate=validate.Regexp(r"^[A-Z]{2}$"))


class BatchDeliveryIn(Schema):
    # `snapshot` is required for `single_address`: said in the OpenAPI document too (api/openapi.py).
    OPENAPI_CONSTRAINTS = {"anyOf": [
        {"properties": {"target": {"enum": [t.value for t in DeliveryTarget if t != DeliveryTarget.SINGLE_ADDRESS]}}},
        {"required": ["snapshot"], "properties": {"snapshot": {"type": "object"}}},
    ]}

    target = fields.String(required=True, validate=validate.OneOf([t.value for t in DeliveryTarget]))
    addressId = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=64))
    snapshot = fields.Nested(DeliveryAddressIn, load_default=None, allow_none=True,
                             metadata={"description": "the address of `single_address` (required there)"})

    @validates_schema
    def _snapshot_for_single_address(self, data, **kwargs):
        if data["target"] == DeliveryTarget.SINGLE_ADDRESS and not data.get("snapshot"):
            raise ValidationError("required for target single_address", "snapshot")


class ReuseIn(Schema):
    zoneId = ZONE_ID
    faceIndex = fields.Integer(load_default=None, allow_none=True, strict=True, validate=validate.Range(min=0),
                               metadata={"description": "a face in stock in every furniture (one visual per face)"})
    quantity = fields.Integer(load_default=None, allow_none=True, strict=True, validate=validate.Range(min=0),
                              metadata={"description": "same visual: panels in stock for the whole batch"})

    @validates_schema
    def _one_of(self, data, **kwargs):
        if (data["faceIndex"] is None) == (data["quantity"] is None):
            raise ValidationError("give either faceIndex (a face in stock) or quantity (a batch stock total)",
                                  "quantity")


class AllocationCellIn(Schema):
    reservationId = fields.String(required=True, validate=validate.Length(min=1, max=36))
    printed = fields.Integer(required=True, strict=True, validate=validate.Range(min=0))


class AllocationIn(Schema):
    zoneId = ZONE_ID
    quantities = fields.List(fields.Nested(AllocationCellIn), required=True,
                             validate=validate.Length(max=MAX_SELECTION))


class IdList(fields.List):
    """A list of ids (strings of 1 to `max_length` characters) checked in one pass: marshmallow
    deserializes a list item by item through the inner field (slow for a large selection);
    a list with anything else in it goes that way, for the same errors."""

    def __init__(self, *, max_length: int, **kwargs) -> None:
        super().__init__(fields.String(validate=validate.Length(min=1, max=max_length)), **kwargs)
        self.max_length = max_length

    def _deserialize(self, value, attr, data, **kwargs):
        # Each check one pass in C (`map` of a builtin): the types, then the lengths.
        if type(value) is list and set(map(type, value)) <= {str} and (
                not value or (min(map(len, value)) > 0 and max(map(len, value)) <= self.max_length)):
            return list(value)
        return super()._deserialize(value, attr, data, **kwargs)


class BatchDepositIn(Schema):
    reservationIds = IdList(max_length=36, required=True,
                                 validate=validate.Length(min=1, max=MAX_SELECTION),
                                 metadata={"description": "the selection, in order: stock goes to the first ones"})
    delivery = fields.Nested(BatchDeliveryIn, required=True)
    files = fields.List(fields.Nested(SlotIn), load_default=None, allow_none=True,
                        metadata={"description": "slots whose batch preflight is confirmed; absent: every preflight"})
    reuse = fields.List(fields.Nested(ReuseIn), load_default=list)
    allocations = fields.List(fields.Nested(AllocationIn), load_default=None, allow_none=True, metadata={
        "description": "explicit split of printed panels per reservation; target store only (ignored otherwise)"})


class OpenBatchIn(Schema):
    campaignId = fields.String(required=True, validate=validate.Length(min=1, max=36))
    promoFurnitureTypeId = fields.String(required=True, validate=validate.Length(min=1, max=36))


class BatchStatusIn(Schema):
    nextStatus = fields.String(required=True, metadata=enum_of(PrintOrderStatus))


def deposit_from(body: dict) -> BatchDeposit:
    delivery_body = body["delivery"]
    address = None
    if delivery_body["target"] == DeliveryTarget.SINGLE_ADDRESS:
        snap = delivery_body["snapshot"]
        address = Recipient(DeliveryTarget.SINGLE_ADDRESS, snap["name"], snap["street"], snap["postalCode"],
                            snap["city"], snap["country"])
    stock, faces = {}, []
    for item in body["reuse"]:
        if item["quantity"] is not None:
            if item["zoneId"] in stock:
                raise ValidationError({"reuse": [f"zone {item['zoneId']} has two stock totals; declare one"]})
            stock[item["zoneId"]] = item["quantity"]
        else:
            faces.append(Slot(item["zoneId"], item["faceIndex"]))
    allocations = None
    if body["allocations"] is not None:
        allocations = {}
        for zone in body["allocations"]:
            cells = {cell["reservationId"]: cell["printed"] for cell in zone["quantities"]}
            if len(cells) != len(zone["quantities"]) or zone["zoneId"] in allocations:
                raise ValidationError({"allocations": ["a zone, and a reservation in a zone, appear once"]})
            allocations[zone["zoneId"]] = cells
    files = None if body["files"] is None else [Slot(f["zoneId"], f["faceIndex"]) for f in body["files"]]
    return BatchDeposit(
        reservation_ids=body["reservationIds"],
        delivery=Delivery(DeliveryTarget(delivery_body["target"]), address, delivery_body["addressId"]),
        files=files, reuse=Reuse(stock, tuple(faces)), allocations=allocations,
    )


# --- answers ---------------------------------------------------------------------------------------------


class GroupOut(Schema):
    """A furniture group of a campaign (`backend.printing.batch_drafts.Group`)."""

    furnitureTypeId = fields.String(attribute="furniture_type_id", required=True)
    furnitureTypeVersionId = fields.String(attribute="configuration.version_id", required=True)
    name = fields.String(attribute="configuration.name", required=True)
    printableZoneCount = fields.Integer(attribute="configuration.printable_zone_count", required=True)
    zones = fields.List(fields.Nested(GabaritZoneOut), attribute="configuration.zones", required=True)
    reservationsCount = ComputedInteger(lambda group: len(group.reservations), required=True)
    toDepositCount = fields.Integer(attribute="to_deposit_count", required=True,
                                    metadata={"description": "reservations a batch can take"})
    draftBatchId = fields.String(attribute="draft_batch_id", required=True, allow_none=True)


class GroupsOut(Schema):
    groups = fields.List(fields.Nested(GroupOut), required=True)


def _store_address(member) -> str | None:
    store = member.reservation.ad_space.store
    return f"{store.street}, {store.postal_code} {store.city}" if Recipient.of_store(store).has_address else None


class GroupReservationOut(Schema):
    """A reservation of a group with the batch eligibility `backend` decided (`GroupMember`)."""

    reservationId = fields.String(attribute="reservation.id", required=True)
    adSpaceName = fields.String(attribute="reservation.ad_space.name", required=True)
    storeName = fields.String(attribute="reservation.ad_space.store.name", required=True)
    address = ComputedString(_store_address, required=True, allow_none=True)
    impressionStatus = ComputedString(
        lambda member: shown_impression_status(member.reservation.impression_status, member.reservation.status),
        required=True, metadata=enum_of(ImpressionStatus))
    eligible = fields.Boolean(required=True)
    exclusionReason = fields.String(attribute="exclusion", required=True, allow_none=True,
                                    metadata={"enum": [Exclusion.NOT_TO_DEPOSIT.value]})


class GroupReservationsOut(Schema):
    reservations = fields.List(fields.Nested(GroupReservationOut), required=True)


class BatchOrderRefOut(Schema):
    code = fields.String(required=True)
    reservationId = fields.String(attribute="reservation_id", required=True)


class BatchOrderOut(PrinterPrintOrderListItemOut):
    reservationId = fields.String(attribute="order.reservation_id", required=True)


def dump_prebuilt(schema: Schema, obj, prebuilt: dict) -> dict:
    """`schema`'s dump of `obj` where the fields of `prebuilt` are answered as they are (plain values
    under the API's names already, built in one pass for long lists), the
    others dumped field by field."""
    others = [name for name in schema.fields if name not in prebuilt]
    return {**prebuilt, **(type(schema)(only=others).dump(obj) if others else {})}


class BatchOut(Schema):
    """A batch with its configuration (`backend.printing.batch_state.BatchState`). Its `orders` are the
    list items of `order_views.batch_order_items`, answered as they are; tests/printing/test_batches.py
    holds each equal to `BatchOrderOut`'s dump of the order's view."""

    def dump(self, obj, *, many: bool | None = None) -> dict:
        if "orders" not in self.fields:
            return super().dump(obj, many=many)
        return dump_prebuilt(self, obj, {"orders": obj.orders})

    id = fields.String(attribute="batch.id", required=True)
    code = fields.String(attribute="batch.code", required=True, allow_none=True,
                         metadata={"description": "LOT-..., once sent"})
    status = fields.String(attribute="batch.status", required=True,
                           metadata={"enum": ["draft", "sent"], "description": "stored status"})
    campaignId = fields.String(attribute="batch.campaign_id", required=True)
    promoFurnitureTypeId = fields.String(attribute="batch.promo_furniture_type_id", required=True)
    furnitureTypeVersionId = fields.String(attribute="batch.furniture_type_version_id", required=True)
    deliveryTarget = fields.String(attribute="batch.delivery_target", required=True)
    createdAt = UtcDateTime(attribute="batch.created_at", required=True)
    updatedAt = UtcDateTime(attribute="batch.updated_at", required=True)
    sentAt = UtcDateTime(attribute="batch.sent_at", required=True, allow_none=True)
    zones = fields.List(fields.Nested(GabaritZoneOut), attribute="configuration.zones", required=True)
    printableZoneCount = fields.Integer(attribute="configuration.printable_zone_count", required=True)
    orders = fields.List(fields.Nested(BatchOrderOut), required=True,
                         metadata={"description": "the batch's orders (none while a draft; cancelled ones included)"})
    preflights = fields.List(fields.Nested(PreflightOut), required=True)


class BatchAnswer(Schema):
    batch = fields.Nested(BatchOut, required=True)


class ZoneTotalOut(Schema):
    zoneId = fields.String(required=True)
    faces = fields.Integer(required=True, metadata={"description": "face quantity x retained population"})
    printed = fields.Integer(required=True)
    reused = fields.Integer(required=True)


class RecapOut(Schema):
    selectedPlacements = fields.Integer(required=True, metadata={"description": "raw selection size"})
    retained = fields.Integer(required=True)
    excluded = fields.Integer(required=True)
    ordersToCreate = fields.Integer(required=True,
                                    metadata={"description": "reservations receiving at least one printed panel"})
    panelsToPrint = fields.Integer(required=True)
    reusedPanels = fields.Integer(required=True)


class PlannedLineOut(Schema):
    zoneId = fields.String(required=True)
    faceIndex = fields.Integer(required=True, allow_none=True)
    quantity = fields.Integer(required=True)


class CandidateOut(Schema):
    reservationId = fields.String(required=True)
    storeName = fields.String(required=True)
    classification = fields.String(required=True, metadata={"enum": ["retained", "excluded"]})
    exclusionReason = fields.String(required=True, allow_none=True, metadata={"enum": [e.value for e in Exclusion]})
    recipient = fields.String(required=True, allow_none=True, metadata={"description": "formatted delivery address"})
    printedPanels = fields.Integer(required=True)
    reusedFaces = fields.Integer(required=True)
    lines = fields.List(fields.Nested(PlannedLineOut), required=True)


class ExclusionOut(Schema):
    reservationId = fields.String(required=True)
    reason = fields.String(required=True, metadata={"enum": [e.value for e in Exclusion]})


SUMMARY_FIELDS = ("batchId", "recap", "zones", "reservations", "exclusions")


class PreviewOut(Schema):
    """A preview (`backend.printing.batch_preview.Outcome`, its `summary`).

    The summary is plain values under the API's names already (`batch_preview.summarize`), one entry per
    selected reservation: it is answered as it is, and only the other fields are dumped field by
    field (a large preview spent more time in marshmallow than in its query).
    tests/printing/test_batches.py holds this equal to the field-by-field dump."""

    def dump(self, obj, *, many: bool | None = None) -> dict:
        if not set(SUMMARY_FIELDS) & set(self.fields):
            return super().dump(obj, many=many)
        return dump_prebuilt(self, obj, {name: obj.summary[name] for name in SUMMARY_FIELDS})

    batchId = fields.String(attribute="summary.batchId", required=True)
    recap = fields.Nested(RecapOut, attribute="summary.recap", required=True)
    zones = fields.List(fields.Nested(ZoneTotalOut), attribute="summary.zones", required=True)
    reservations = fields.List(fields.Nested(CandidateOut), attribute="summary.reservations", required=True)
    exclusions = fields.List(fields.Nested(ExclusionOut), attribute="summary.exclusions", required=True)


class ConfirmOut(PreviewOut):
    """A confirmation (`Outcome`): the preview's fields and what it did. Its `orders` (one per order
    made: their nested dumps were a large share of a large confirmation's Python time) are
    answered as built, last, as the field-by-field dump placed them."""

    def dump(self, obj, *, many: bool | None = None) -> dict:
        if "orders" not in self.fields:
            return super().dump(obj, many=many)
        answer = type(self)(only=[name for name in self.fields if name != "orders"]).dump(obj)
        answer["orders"] = [{"code": order.code, "reservationId": order.reservation_id} for order in obj.orders]
        return answer

    batch = fields.Nested(BatchOut, attribute="state", required=True, allow_none=True,
                          metadata={"description": "null when no order resulted: the batch was deleted"})
    deleted = fields.Boolean(required=True)
    replayed = fields.Boolean(required=True, metadata={"description": "the batch was already confirmed"})
    orders = fields.List(fields.Nested(BatchOrderRefOut), required=True)


def _batch_item_fields(path: str) -> dict[str, fields.Field]:
    """The fields of a sent batch read from `path` (the batch row with its aggregates)."""
    return {
        "code": fields.String(attribute=f"{path}code", required=True),
        "industrialOrganizationId": fields.String(attribute=f"{path}organization_id", required=True),
        "industrialName": fields.String(attribute=f"{path}industrial_name", required=True),
        "campaignId": fields.String(attribute=f"{path}campaign_id", required=True),
        "campaignName": fields.String(attribute=f"{path}campaign_name", required=True),
        "deliveryTarget": fields.String(attribute=f"{path}delivery_target", required=True),
        "status": ComputedString(
            (lambda view: status_of(view.batch)) if path else status_of, required=True,
            metadata={"description": "derived from the orders (draft, cancelled, a common status, or mixed)",
                      **enum_of([*PrintOrderStatus, MIXED])}),
        "ordersCount": fields.Integer(attribute=f"{path}orders_count", required=True),
        "totalPanels": fields.Integer(attribute=f"{path}total_panels", required=True),
        "createdAt": UtcDateTime(attribute=f"{path}created_at", required=True),
        "updatedAt": UtcDateTime(attribute=f"{path}last_update", required=True),
    }


BatchListItemOut = Schema.from_dict(_batch_item_fields(""), name="BatchListItemOut")


class BatchListOut(Schema):
    batches = fields.List(fields.Nested(BatchListItemOut), required=True)


class AggregatedLineOut(Schema):
    """`backend.printing.batch_views.AggregatedFile`."""

    fileName = fields.String(attribute="file_name", required=True,
                             metadata={"description": "entry name in the batch ZIP"})
    assetId = fields.String(attribute="line.asset_id", required=True)
    zoneId = fields.String(attribute="line.zone_id", required=True)
    zoneLabel = fields.String(attribute="zone_label", required=True)
    widthMm = fields.Integer(attribute="width_mm", required=True)
    heightMm = fields.Integer(attribute="height_mm", required=True)
    quantity = fields.Integer(attribute="line.quantity", required=True, metadata={"description": "batch total"})
    position = fields.Integer(attribute="line.position", required=True)


class ManifestFileOut(Schema):
    fileName = fields.String(required=True)
    quantity = fields.Integer(required=True)


class ManifestEntryOut(Schema):
    code = fields.String(required=True)
    status = fields.String(required=True, metadata=enum_of(PrintOrderStatus))
    storeName = fields.String(required=True)
    recipient = fields.String(required=True, allow_none=True)
    address = fields.String(required=True, allow_none=True)
    panels = fields.Integer(required=True)
    files = fields.List(fields.Nested(ManifestFileOut), required=True)


BatchDetailOut = Schema.from_dict({
    **_batch_item_fields("batch."),
    "distinctVisualsCount": ComputedInteger(lambda view: len(view.files), required=True),
    "aggregatedLines": fields.List(fields.Nested(AggregatedLineOut), attribute="files", required=True),
    "manifest": fields.List(fields.Nested(ManifestEntryOut), required=True),
}, name="BatchDetailOut")


class UnadvancedOrderOut(Schema):
    code = fields.String(required=True, metadata={"example": "PM-0042"})
    errorCode = fields.String(attribute="error_code", required=True, allow_none=True,
                              metadata={"example": "VALIDATION_ERROR"})
    reason = fields.String(required=True, allow_none=True)


class AdvanceCountersOut(Schema):
    """`{advanced, skipped, failed}` of spec B, with the run and why each order was not advanced."""

    advanced = fields.Integer(required=True)
    skipped = fields.Integer(required=True)
    failed = fields.Integer(required=True)
    runId = fields.String(attribute="id", required=True)
    skippedOrders = fields.List(fields.Nested(UnadvancedOrderOut), attribute="skipped_orders", required=True,
                                metadata={"description": "each skipped order (VALIDATION_ERROR: another step, "
                                                         "cancelled) with its reason"})
    failedOrders = fields.List(fields.Nested(UnadvancedOrderOut), attribute="failed_orders", required=True)


class StatusRunOut(AdvanceCountersOut):
    """`backend.printing.batch_advance.RunState`."""

    status = fields.String(required=True, metadata={"enum": ["running", "done"]})
    groupsTotal = fields.Integer(attribute="groups_total", required=True)
    currentGroup = fields.Integer(attribute="current_group", required=True)
    createdAt = UtcDateTime(attribute="created_at", required=True)
    finishedAt = UtcDateTime(attribute="finished_at", required=True, allow_none=True)
