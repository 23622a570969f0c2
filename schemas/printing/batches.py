"""Print batches (spec B): the industrial's groups, drafts, preview and confirmation; the
printer's and industrial's views of sent batches; the batch status advance. Shapes decided in
docs/printing.md; answers built by the `*_out` functions, documented by the schema classes."""

from __future__ import annotations

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from backend.clock import iso
from backend.printing.allocation import Slot
from backend.printing.batch_advance import RunState
from backend.printing.batch_views import BatchView, manifest, status_of
from backend.printing.batches import BatchDeposit, Delivery, Exclusion, Group, Outcome, Reuse
from backend.printing.configuration import configuration_of
from backend.printing.impressions import shown_impression_status
from backend.printing.models import DeliveryTarget, PrintOrderBatch
from backend.printing.plans import Recipient
from schemas.common import enveloped
from schemas.printing.deposits import ZONE_ID, GabaritZoneOut, SlotIn, gabarits_out

MAX_SELECTION = 2_000  # spec B targets batches of up to 1,000 stores


class DeliveryAddressIn(Schema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=200))
    street = fields.String(required=True, validate=validate.Length(min=1, max=200))
    postalCode = fields.String(required=True, validate=validate.Length(min=1, max=20))
    city = fields.String(required=True, validate=validate.Length(min=1, max=120))
    country = fields.String(load_default="FR", validate=validate.Regexp(r"^[A-Z]{2}$"))


class BatchDeliveryIn(Schema):
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


class BatchDepositIn(Schema):
    reservationIds = fields.List(fields.String(validate=validate.Length(min=1, max=36)), required=True,
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
    nextStatus = fields.String(required=True)


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
    furnitureTypeId = fields.String(required=True)
    furnitureTypeVersionId = fields.String(required=True)
    name = fields.String(required=True)
    printableZoneCount = fields.Integer(required=True)
    zones = fields.List(fields.Nested(GabaritZoneOut), required=True)
    reservationsCount = fields.Integer(required=True)
    toDepositCount = fields.Integer(required=True, metadata={"description": "reservations a batch can take"})
    draftBatchId = fields.String(required=True, allow_none=True)


class GroupsOut(Schema):
    groups = fields.List(fields.Nested(GroupOut), required=True)


class GroupReservationOut(Schema):
    reservationId = fields.String(required=True)
    adSpaceName = fields.String(required=True)
    storeName = fields.String(required=True)
    address = fields.String(required=True, allow_none=True)
    impressionStatus = fields.String(required=True)
    eligible = fields.Boolean(required=True)
    exclusionReason = fields.String(required=True, allow_none=True,
                                    metadata={"enum": ["not_to_deposit", "other_configuration"]})


class GroupReservationsOut(Schema):
    reservations = fields.List(fields.Nested(GroupReservationOut), required=True)


class BatchOrderRefOut(Schema):
    code = fields.String(required=True)
    reservationId = fields.String(required=True)


class BatchOut(Schema):
    id = fields.String(required=True)
    code = fields.String(required=True, allow_none=True, metadata={"description": "LOT-..., once sent"})
    status = fields.String(required=True, metadata={"enum": ["draft", "sent"], "description": "stored status"})
    campaignId = fields.String(required=True)
    promoFurnitureTypeId = fields.String(required=True)
    furnitureTypeVersionId = fields.String(required=True)
    deliveryTarget = fields.String(required=True)
    createdAt = fields.String(required=True)
    updatedAt = fields.String(required=True)
    sentAt = fields.String(required=True, allow_none=True)
    zones = fields.List(fields.Nested(GabaritZoneOut), required=True)
    printableZoneCount = fields.Integer(required=True)


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


class PreviewOut(Schema):
    batchId = fields.String(required=True)
    recap = fields.Nested(RecapOut, required=True)
    zones = fields.List(fields.Nested(ZoneTotalOut), required=True)
    reservations = fields.List(fields.Nested(CandidateOut), required=True)
    exclusions = fields.List(fields.Nested(ExclusionOut), required=True)


class ConfirmOut(PreviewOut):
    batch = fields.Nested(BatchOut, required=True, allow_none=True,
                          metadata={"description": "null when no order resulted: the batch was deleted"})
    deleted = fields.Boolean(required=True)
    replayed = fields.Boolean(required=True, metadata={"description": "the batch was already confirmed"})
    orders = fields.List(fields.Nested(BatchOrderRefOut), required=True)


class BatchListItemOut(Schema):
    code = fields.String(required=True)
    industrialOrganizationId = fields.String(required=True)
    industrialName = fields.String(required=True)
    campaignId = fields.String(required=True)
    campaignName = fields.String(required=True)
    deliveryTarget = fields.String(required=True)
    status = fields.String(required=True, metadata={"description": "derived from the orders (draft, cancelled, "
                                                                   "a common status, or mixed)"})
    ordersCount = fields.Integer(required=True)
    totalPanels = fields.Integer(required=True)
    createdAt = fields.String(required=True)
    updatedAt = fields.String(required=True)


class BatchListOut(Schema):
    batches = fields.List(fields.Nested(BatchListItemOut), required=True)


class AggregatedLineOut(Schema):
    fileName = fields.String(required=True, metadata={"description": "entry name in the batch ZIP"})
    assetId = fields.String(required=True)
    zoneId = fields.String(required=True)
    zoneLabel = fields.String(required=True)
    widthMm = fields.Integer(required=True)
    heightMm = fields.Integer(required=True)
    quantity = fields.Integer(required=True, metadata={"description": "batch total"})
    position = fields.Integer(required=True)


class ManifestFileOut(Schema):
    fileName = fields.String(required=True)
    quantity = fields.Integer(required=True)


class ManifestEntryOut(Schema):
    code = fields.String(required=True)
    status = fields.String(required=True)
    storeName = fields.String(required=True)
    recipient = fields.String(required=True, allow_none=True)
    address = fields.String(required=True, allow_none=True)
    panels = fields.Integer(required=True)
    files = fields.List(fields.Nested(ManifestFileOut), required=True)


class BatchDetailOut(BatchListItemOut):
    distinctVisualsCount = fields.Integer(required=True)
    aggregatedLines = fields.List(fields.Nested(AggregatedLineOut), required=True)
    manifest = fields.List(fields.Nested(ManifestEntryOut), required=True)


class AdvanceCountersOut(Schema):
    advanced = fields.Integer(required=True)
    skipped = fields.Integer(required=True)
    failed = fields.Integer(required=True)


class StatusRunOut(AdvanceCountersOut):
    runId = fields.String(required=True)
    status = fields.String(required=True, metadata={"enum": ["running", "done"]})
    groupsTotal = fields.Integer(required=True)
    currentGroup = fields.Integer(required=True)
    createdAt = fields.String(required=True)
    finishedAt = fields.String(required=True, allow_none=True)


GroupsOutEnvelope = enveloped(GroupsOut, "GroupsOutEnvelope")
GroupReservationsOutEnvelope = enveloped(GroupReservationsOut, "GroupReservationsOutEnvelope")
BatchAnswerEnvelope = enveloped(BatchAnswer, "BatchAnswerEnvelope")
PreviewOutEnvelope = enveloped(PreviewOut, "PreviewOutEnvelope")
ConfirmOutEnvelope = enveloped(ConfirmOut, "ConfirmOutEnvelope")
BatchListOutEnvelope = enveloped(BatchListOut, "BatchListOutEnvelope")
BatchDetailOutEnvelope = enveloped(BatchDetailOut, "BatchDetailOutEnvelope")
AdvanceCountersOutEnvelope = enveloped(AdvanceCountersOut, "AdvanceCountersOutEnvelope")
StatusRunOutEnvelope = enveloped(StatusRunOut, "StatusRunOutEnvelope")


def group_out(group: Group) -> dict:
    configuration = gabarits_out("", group.configuration)
    return {
        "furnitureTypeId": group.furniture_type_id, "furnitureTypeVersionId": group.configuration.version_id,
        "name": group.configuration.name, "printableZoneCount": configuration["printableZoneCount"],
        "zones": configuration["zones"], "reservationsCount": len(group.reservations),
        "toDepositCount": group.to_deposit_count, "draftBatchId": group.draft_batch_id,
    }


def group_reservation_out(group: Group, reservation) -> dict:
    store = reservation.ad_space.store
    recipient = Recipient.of_store(store)
    impression = shown_impression_status(reservation.impression_status, reservation.status)
    reason = None
    if impression != "to_deposit":
        reason = Exclusion.NOT_TO_DEPOSIT.value
    elif reservation.furniture_type_version_id != group.configuration.version_id:
        reason = Exclusion.OTHER_CONFIGURATION.value
    return {
        "reservationId": reservation.id, "adSpaceName": reservation.ad_space.name, "storeName": store.name,
        "address": f"{store.street}, {store.postal_code} {store.city}" if recipient.has_address else None,
        "impressionStatus": impression, "eligible": reason is None, "exclusionReason": reason,
    }


def batch_out(batch: PrintOrderBatch) -> dict:
    configuration = gabarits_out("", configuration_of(batch.furniture_type_version_id))
    return {
        "id": batch.id, "code": batch.code, "status": batch.status, "campaignId": batch.campaign_id,
        "promoFurnitureTypeId": batch.promo_furniture_type_id,
        "furnitureTypeVersionId": batch.furniture_type_version_id, "deliveryTarget": batch.delivery_target,
        "createdAt": iso(batch.created_at), "updatedAt": iso(batch.updated_at), "sentAt": iso(batch.sent_at),
        "zones": configuration["zones"], "printableZoneCount": configuration["printableZoneCount"],
    }


def preview_out(outcome: Outcome) -> dict:
    return outcome.summary


def confirm_out(outcome: Outcome) -> dict:
    return {
        **outcome.summary, "batch": batch_out(outcome.batch) if outcome.batch else None,
        "deleted": outcome.batch is None, "replayed": outcome.replayed,
        "orders": [{"code": code, "reservationId": rid}
                   for rid, code in sorted(outcome.order_codes.items(), key=lambda kv: kv[1])],
    }


def batch_list_item_out(batch: PrintOrderBatch) -> dict:
    return {
        "code": batch.code, "industrialOrganizationId": batch.organization_id, "industrialName": batch.industrial_name,
        "campaignId": batch.campaign_id, "campaignName": batch.campaign_name, "deliveryTarget": batch.delivery_target,
        "status": status_of(batch), "ordersCount": batch.orders_count, "totalPanels": int(batch.total_panels),
        "createdAt": iso(batch.created_at), "updatedAt": iso(batch.last_update),
    }


def batch_detail_out(view: BatchView) -> dict:
    return {
        **batch_list_item_out(view.batch), "distinctVisualsCount": len(view.files),
        "aggregatedLines": [
            {"fileName": f.file_name, "assetId": f.line.asset_id, "zoneId": f.line.zone_id, "zoneLabel": f.zone_label,
             "widthMm": f.width_mm, "heightMm": f.height_mm, "quantity": f.line.quantity, "position": f.line.position}
            for f in view.files
        ],
        "manifest": manifest(view),
    }


def run_out(state: RunState) -> dict:
    return {"runId": state.id, "status": state.status, "advanced": state.advanced, "skipped": state.skipped,
            "failed": state.failed, "groupsTotal": state.groups_total, "currentGroup": state.current_group,
            "createdAt": iso(state.created_at), "finishedAt": iso(state.finished_at)}
