"""The deposit of a print batch as its preview shows it, and as its confirmation plans it (spec B).

    open the draft -> preflights -> preview (no write) -> confirm (`batch_confirmation`)

Preview and confirmation share `load_batch` (the batch, its configuration and its preflights in
one statement), `batch_selection.classify` (which reservations are retained, and why the others
are not) and `plan_batch` (the pure allocation of `allocation.plan_deposit` on the retained
population), and answer `summarize`'s summary; the preview writes and locks nothing.

A group's configuration is its furniture type as it is now, whatever version its reservations
were sold with; files attached for a version the type has since left are refused (attach them
again on the current zones).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from backend.errors import NotFound, ValidationError
from backend.printing import allocation, preflights
from backend.printing.allocation import DepositedFile, Slot
from backend.printing.batch_selection import Classification, Delivery, classify
from backend.printing.batch_state import BatchState, batch_state, require_draft
from backend.printing.configuration import Configuration, ConfigurationZone
from backend.printing.models import DeliveryTarget, PrintOrderBatch


@dataclass(frozen=True)
class Reuse:
    """Stock totals of same-visual zones ({zoneId: quantity}) and per-face switches."""

    stock: Mapping[str, int] = field(default_factory=dict)
    faces: tuple[Slot, ...] = ()


@dataclass(frozen=True)
class BatchDeposit:
    reservation_ids: list[str]
    delivery: Delivery
    files: list[Slot] | None = None  # None: every preflight of the batch
    reuse: Reuse = field(default_factory=Reuse)
    allocations: Mapping[str, Mapping[str, int]] | None = None


class LoadedBatch(NamedTuple):
    """A batch with what its preview and confirmation read: the current configuration of its
    furniture type (as `current_configuration` gives it) and its preflights."""

    batch: PrintOrderBatch
    configuration: Configuration
    attached: dict[tuple[str, int | None], str]  # (zone, face) -> asset of each preflight


# The batch, its furniture type's current version with its zones (the version it was opened with
# when the type has no current one) and its preflights, in one statement. Locked: the
# confirmation's.
_LOAD = (
    "SELECT b.*, v.furniture_type_id AS type_id, v.id AS version_id, v.version AS version_number,"
    " v.name AS type_name, v.printer_organization_id AS type_printer_id,"
    " (SELECT json_agg(json_build_array(z.id, z.code, z.label, z.face_quantity, z.printable, z.width_mm,"
    " z.height_mm, z.position) ORDER BY z.position) FROM furniture_zone z WHERE z.furniture_type_version_id = v.id)"
    " AS zones,"
    " (SELECT json_agg(json_build_array(p.zone_id, p.face_index, p.asset_id) ORDER BY p.zone_id, p.face_index"
    " NULLS FIRST) FROM print_preflight p WHERE p.batch_id = b.id) AS attached"
    " FROM print_order_batch b"
    " JOIN furniture_type_version f ON f.id = b.furniture_type_version_id"
    " JOIN furniture_type t ON t.id = f.furniture_type_id"
    " LEFT JOIN furniture_type_version c ON c.furniture_type_id = t.id AND c.version = t.current_version"
    " JOIN furniture_type_version v ON v.id = COALESCE(c.id, f.id)"
    " WHERE b.id = %s AND b.organization_id = %s"
)
_LOAD_LOCKED = _LOAD + " FOR UPDATE OF b"
_CONFIGURATION_COLUMNS = ("type_id", "version_id", "version_number", "type_name", "type_printer_id")


def load_batch(*, organization_id: str, batch_id: str, lock: bool) -> LoadedBatch:
    """The organization's batch with its configuration and preflights; NotFound otherwise. The
    caller checks that it is a draft (a confirmation answers a sent batch again)."""
    query = PrintOrderBatch.raw(_LOAD_LOCKED if lock else _LOAD, batch_id, organization_id).dicts()
    row = next(iter(query), None)
    if row is None:
        raise NotFound("print batch not found")
    zones, attached = row.pop("zones"), row.pop("attached")
    configuration = Configuration(*(row.pop(column) for column in _CONFIGURATION_COLUMNS),
                                  tuple(ConfigurationZone(*zone) for zone in zones or ()))
    return LoadedBatch(PrintOrderBatch(**row), configuration,
                       {(zone, face): asset for zone, face, asset in attached or ()})


def _files(loaded: LoadedBatch, slots: list[Slot] | None) -> list[DepositedFile]:
    if slots is None:
        return [DepositedFile(zone, face, asset) for (zone, face), asset in loaded.attached.items()]
    files = []
    for slot in slots:
        preflights.check_slot(loaded.configuration, slot.zone_id, slot.face_index)
        asset_id = loaded.attached.get((slot.zone_id, slot.face_index))
        if asset_id is None:
            raise ValidationError("no file is attached to this slot of the batch", zoneId=slot.zone_id,
                                  faceIndex=slot.face_index, fields={"files": ["a slot without a preflight"]})
        files.append(DepositedFile(slot.zone_id, slot.face_index, asset_id))
    return files


def plan_batch(loaded: LoadedBatch, deposit: BatchDeposit, classification: Classification) -> allocation.DepositPlan:
    """The split of the deposit over the retained reservations; the refusals preview and
    confirmation share (nothing retained, a slot without a preflight, target `none` that prints)."""
    retained = classification.retained
    if not retained:
        reasons: dict[str, int] = {}
        for _, reason in classification.excluded:
            reasons[reason.value] = reasons.get(reason.value, 0) + 1
        raise ValidationError("no reservation of the selection can be deposited in this batch",
                              fields={"reservationIds": ["no retained reservation"]}, excludedBy=reasons)
    explicit = deposit.allocations if deposit.delivery.target == DeliveryTarget.STORE else None  # rule 5
    files = _files(loaded, deposit.files)
    plan = allocation.plan_deposit(
        loaded.configuration.allocation_zones, [reservation.id for reservation in retained], files,
        reused_slots=deposit.reuse.faces, stock=deposit.reuse.stock, allocations=explicit,
    )
    if deposit.delivery.target == DeliveryTarget.NONE and plan.panels_to_print:  # rule 6
        raise ValidationError("nothing is shipped with target none, yet the split still prints panels",
                              panelsToPrint=plan.panels_to_print, fields={"delivery": ["target none prints nothing"]})
    return plan


@dataclass(frozen=True)
class Outcome:
    """A preview, or what a confirmation did: `summary` is what both answer (recap, zones, the
    classification of each reservation and its planned lines, exclusions)."""

    batch: PrintOrderBatch | None  # None once deleted (no order)
    summary: dict
    order_codes: dict[str, str] = field(default_factory=dict)  # reservation id -> order code
    replayed: bool = False
    written: BatchState | None = None  # the batch as the confirmation wrote it (not read back)

    @property
    def deleted(self) -> bool:
        return self.batch is None

    @property
    def orders(self) -> list[OrderRef]:
        """The orders made, by code."""
        return [OrderRef(code, rid) for rid, code in sorted(self.order_codes.items(), key=lambda kv: kv[1])]

    @property
    def state(self) -> BatchState | None:
        """The batch with its configuration; None once deleted (no order)."""
        if self.written is not None:
            return self.written
        return None if self.batch is None else batch_state(self.batch)


@dataclass(frozen=True)
class OrderRef:
    code: str
    reservation_id: str


def summarize(batch_id: str, deposit: BatchDeposit, classification: Classification,
              plan: allocation.DepositPlan) -> dict:
    """The preview's and the confirmation's answer, as plain values under the API's names."""
    keys = iter(plan.keys)  # one per retained reservation, in the same order
    # Per distinct plan (the allocation shares its lines and reused faces between reservations of
    # the same key): its lines as answered, its printed panels and its reused faces, worked out once.
    shown = {key: ([{"zoneId": line.zone_id, "faceIndex": line.face_index, "quantity": line.quantity}
                    for line in lines], allocation.printed_panels(lines), len(reused))
             for key, (lines, reused) in plan.planned.items()}
    # A retained reservation's recipient as answered: its store's address under target `store`
    # (which `SELECTION` found complete), else the same for every one.
    to_store = deposit.delivery.target == DeliveryTarget.STORE
    recipient = None if to_store else _shown_address(deposit.delivery)
    reservations = []
    for reservation in classification.rows:
        exclusion = reservation.exclusion
        if exclusion is not None:
            reservations.append({
                "reservationId": reservation.id, "storeName": reservation.store_name,
                "classification": "excluded", "exclusionReason": exclusion, "recipient": None,
                "printedPanels": 0, "reusedFaces": 0, "lines": [],
            })
            continue
        answer = shown[next(keys)]
        if to_store:
            recipient = f"{reservation.store_street}, {reservation.store_postal_code} {reservation.store_city}"
        reservations.append({
            "reservationId": reservation.id, "storeName": reservation.store_name,
            "classification": "retained", "exclusionReason": None, "recipient": recipient,
            "printedPanels": answer[1], "reusedFaces": answer[2], "lines": answer[0],
        })
    excluded = classification.excluded
    return {
        "batchId": batch_id,
        "recap": {
            "selectedPlacements": len(deposit.reservation_ids), "retained": len(classification.retained),
            "excluded": len(excluded), "ordersToCreate": plan.orders, "panelsToPrint": plan.panels_to_print,
            "reusedPanels": plan.reused_panels,
        },
        "zones": [{"zoneId": zone_id, "faces": t.faces, "printed": t.printed, "reused": t.reused}
                  for zone_id, t in plan.zones.items()],
        "reservations": reservations,
        "exclusions": [{"reservationId": rid, "reason": reason.value} for rid, reason in excluded],
    }


def _shown_address(delivery: Delivery) -> str | None:
    """The single address as answered (`street, postal code city`); None under target `none`."""
    address = delivery.address
    if delivery.target != DeliveryTarget.SINGLE_ADDRESS or address is None or not address.has_address:
        return None
    return f"{address.street}, {address.postal_code} {address.city}"


def preview_batch(*, batch_id: str, organization_id: str, deposit: BatchDeposit) -> Outcome:
    """The confirmation's classification and split, written nowhere (no lock, no transaction)."""
    loaded = load_batch(organization_id=organization_id, batch_id=batch_id, lock=False)
    batch = require_draft(loaded.batch)
    classification = classify(batch, deposit.reservation_ids, deposit.delivery, lock=False)
    plan = plan_batch(loaded, deposit, classification)
    return Outcome(batch, summarize(batch.id, deposit, classification, plan))
