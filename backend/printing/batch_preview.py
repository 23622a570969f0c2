"""Print batches (spec B): one deposit for many reservations of a campaign sharing a furniture type.

    groups -> open the draft (idempotent) -> preflights -> preview (no write) -> confirm
    confirm: one `pending` order per retained reservation that prints anything, `LOT-` code,
             status `sent`; no order at all: the batch is deleted and no code is drawn.

Preview and confirmation share `_load_batch` (the batch, its configuration and its preflights in
one statement), `_classify` (which reservations are retained, and why the others are not) and
`_plan` (the pure allocation of `allocation.plan_deposit` on the retained population); the
preview writes and locks nothing. The confirmation runs in one transaction with
the batch row locked, so a double click or a retry finds the batch `sent` and answers its orders
again instead of making a second set.

The stored status is `draft` or `sent`; what readers see is `derived_status`, computed from the
orders. A group's configuration is its furniture type as it is now (`current_configuration`),
whatever version its reservations were sold with: the orders take the type's printer and face
quantities when they are created (spec B, API.md). A confirmation records the version it used on
the batch; files attached for a version the type has since left are refused at confirmation
(attach them again on the current zones).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import NamedTuple

from backend import clock, prepared
from backend.db import database, transaction
from backend.errors import Conflict, NotFound, ValidationError
from backend.marketplace.models import (
    AdSpace,
    Campaign,
    Reservation,
    ReservationStatus,
    Store,
)
from backend.model import new_id
from backend.printing import allocation, preflights
from backend.printing.allocation import DepositedFile, Slot
from backend.printing.configuration import Configuration, ConfigurationZone, current_configuration, printer_for
from backend.printing.models import (
    DeliveryTarget,
    ImpressionStatus,
    PrintOrder,
    PrintOrderBatch,
    PrintPreflight,
)
from backend.printing.order_views import ItemLine, ItemOrder, batch_items_of, batch_order_items
from backend.printing.plans import PlanWrite, Recipient, WrittenPlans, write_plans
from backend.printing.status import PrintOrderStatus

CODE_PREFIX = "LOT-"
DRAFT, SENT = "draft", "sent"
MIXED = "mixed"  # the derived status of a batch whose live orders differ


class Exclusion(StrEnum):
    NOT_FOUND = "not_found"  # unknown, or another organization's: never said which
    OTHER_GROUP = "other_group"  # another campaign or furniture type
    NOT_APPROVED = "not_approved"
    NOT_TO_DEPOSIT = "not_to_deposit"  # already deposited, in stock or with a printer
    MISSING_ADDRESS = "missing_address"  # target `store` only
    DUPLICATE = "duplicate"  # the same id again in the selection (the first one counts)


def derived_status(order_statuses: Iterable[str]) -> str:
    """Spec B: no order -> `draft`; every order cancelled -> `cancelled`; else, without the
    cancelled ones, their common status, or `mixed`."""
    statuses = list(order_statuses)
    if not statuses:
        return DRAFT
    live = {s for s in statuses if s != PrintOrderStatus.CANCELLED}
    if not live:
        return PrintOrderStatus.CANCELLED.value
    return live.pop() if len(live) == 1 else MIXED


def allocate_batch_code() -> str:
    number = database.execute_sql("SELECT nextval('print_batch_code_seq')").fetchone()[0]
    return f"{CODE_PREFIX}{number:04d}"


# --- groups and drafts -------------------------------------------------------------------------------


def _campaign(organization_id: str, campaign_id: str) -> Campaign:
    campaign = Campaign.get_or_none(Campaign.id == campaign_id, Campaign.organization_id == organization_id)
    if campaign is None:
        raise NotFound("campaign not found")
    return campaign


def _group_reservations(organization_id: str, campaign_id: str):
    return (
        Reservation.select(Reservation, AdSpace, Store)
        .join(AdSpace)
        .join(Store)
        .where(Reservation.industrial_organization_id == organization_id, Reservation.campaign == campaign_id,
               Reservation.status == ReservationStatus.APPROVED)
    )


@dataclass(frozen=True)
class Group:
    furniture_type_id: str
    configuration: Configuration
    reservations: list[Reservation]
    draft_batch_id: str | None

    @property
    def members(self) -> list[GroupMember]:
        """Each reservation of the group with why a batch of the group cannot take it (or None)."""
        return [GroupMember(r, _eligibility(r)) for r in self.reservations]

    @property
    def to_deposit_count(self) -> int:
        return sum(1 for member in self.members if member.eligible)


@dataclass(frozen=True)
class GroupMember:
    reservation: Reservation
    exclusion: Exclusion | None

    @property
    def eligible(self) -> bool:
        return self.exclusion is None


# Plain strings: reading an enum member costs 5 times a module constant (Python 3.11), and the
# classification compares every selected row with these.
_TO_DEPOSIT = ImpressionStatus.TO_DEPOSIT.value
_APPROVED = ReservationStatus.APPROVED.value


def _eligibility(reservation: Reservation | Selected) -> Exclusion | None:
    """The batch eligibility rule of an approved reservation of the right group: still to deposit."""
    if (reservation.impression_status or _TO_DEPOSIT) != _TO_DEPOSIT:
        return Exclusion.NOT_TO_DEPOSIT
    return None


def campaign_groups(*, organization_id: str, campaign_id: str) -> list[Group]:
    """The campaign's approved reservations grouped by furniture type (the grouping key with the
    campaign), each group with its configuration and its open draft."""
    _campaign(organization_id, campaign_id)
    by_type: dict[str, list[Reservation]] = {}
    for reservation in _group_reservations(organization_id, campaign_id).order_by(Store.name, Reservation.id):
        by_type.setdefault(reservation.ad_space.promo_furniture_type_id, []).append(reservation)
    configurations = {type_id: current_configuration(reservations[0].furniture_type_version_id)
                      for type_id, reservations in by_type.items()}
    drafts = dict(
        PrintOrderBatch.select(PrintOrderBatch.promo_furniture_type_id, PrintOrderBatch.id)
        .where(PrintOrderBatch.organization_id == organization_id, PrintOrderBatch.campaign_id == campaign_id,
               PrintOrderBatch.status == DRAFT)
        .tuples()
    )
    return [Group(type_id, configurations[type_id], reservations, drafts.get(type_id))
            for type_id, reservations in sorted(by_type.items(), key=lambda kv: configurations[kv[0]].name)]


def campaign_group(*, organization_id: str, campaign_id: str, furniture_type_id: str) -> Group:
    for group in campaign_groups(organization_id=organization_id, campaign_id=campaign_id):
        if group.furniture_type_id == furniture_type_id:
            return group
    raise NotFound("no reservation of this furniture type in the campaign")


def open_batch(*, organization_id: str, campaign_id: str, furniture_type_id: str,
               user_id: str | None) -> tuple[PrintOrderBatch, bool]:
    """The draft of (organization, campaign, furniture type), created if there is none: (batch,
    created). The partial unique index on drafts decides between concurrent opens."""
    group = campaign_group(organization_id=organization_id, campaign_id=campaign_id,
                           furniture_type_id=furniture_type_id)
    with transaction():
        moment = clock.now()
        inserted = (
            PrintOrderBatch.insert(
                id=new_id(), organization_id=organization_id, campaign_id=campaign_id,
                promo_furniture_type_id=furniture_type_id, furniture_type_version_id=group.configuration.version_id,
                status=DRAFT, created_by_user_id=user_id, created_at=moment, updated_at=moment,
            )
            .on_conflict_ignore()
            .returning(PrintOrderBatch.id)
            .execute()
        )
        created = bool(list(inserted))
        batch = PrintOrderBatch.get(
            PrintOrderBatch.organization_id == organization_id, PrintOrderBatch.campaign_id == campaign_id,
            PrintOrderBatch.promo_furniture_type_id == furniture_type_id, PrintOrderBatch.status == DRAFT,
        )
    return batch, created


@dataclass(frozen=True)
class BatchState:
    """A batch as the batch answers show it (spec B resource): its furniture configuration, its
    orders (none while a draft; cancelled ones included, each with its `batchId`) and its
    preflights."""

    batch: PrintOrderBatch
    configuration: Configuration
    orders: list[dict]  # the list items of `order_views.batch_order_items`
    preflights: list[PrintPreflight]


def batch_state(batch: PrintOrderBatch) -> BatchState:
    orders = batch_order_items(batch.id) if batch.status == SENT else []
    return BatchState(batch, current_configuration(batch.furniture_type_version_id), orders,
                      preflights.preflights_of(preflights.Owner(batch_id=batch.id)))


def industrial_batch(*, organization_id: str, batch_id: str, lock: bool = False) -> PrintOrderBatch:
    query = PrintOrderBatch.select().where(PrintOrderBatch.id == batch_id,
                                           PrintOrderBatch.organization_id == organization_id)
    batch = (query.for_update() if lock else query).first()
    if batch is None:
        raise NotFound("print batch not found")
    return batch


def _draft(batch: PrintOrderBatch) -> PrintOrderBatch:
    if batch.status != DRAFT:
        raise Conflict("the batch is already confirmed", reason="batch_sent", code=batch.code)
    return batch


def attach_batch_preflight(*, batch_id: str, organization_id: str, zone_id: str, face_index: int | None,
                           asset_id: str, user_id: str | None) -> PrintPreflight:
    with transaction():
        batch = _draft(industrial_batch(organization_id=organization_id, batch_id=batch_id, lock=True))
        return preflights.attach(
            owner=preflights.Owner(batch_id=batch.id),
            configuration=current_configuration(batch.furniture_type_version_id),
            organization_id=organization_id, zone_id=zone_id, face_index=face_index, asset_id=asset_id,
            user_id=user_id,
        )


def check_batch_preflight_slot(*, batch_id: str, organization_id: str, zone_id: str, face_index: int | None) -> None:
    batch = _draft(industrial_batch(organization_id=organization_id, batch_id=batch_id))
    preflights.check_slot(current_configuration(batch.furniture_type_version_id), zone_id, face_index)


def list_batch_preflights(*, batch_id: str, organization_id: str) -> list[PrintPreflight]:
    batch = industrial_batch(organization_id=organization_id, batch_id=batch_id)
    return preflights.preflights_of(preflights.Owner(batch_id=batch.id))


# --- the deposit of a batch: classification, plan, preview, confirmation ----------------------------


@dataclass(frozen=True)
class Delivery:
    target: DeliveryTarget
    address: Recipient | None = None  # the snapshot of `single_address`
    address_id: str | None = None


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


class Selected(NamedTuple):
    """What classification, allocation and writing read of a selected reservation: one row of
    `SELECTION` as it comes (a 1,000-store batch built 3,000 model instances)."""

    id: str
    industrial_organization_id: str
    campaign_id: str
    status: str
    impression_status: str | None
    promo_furniture_type_id: str
    store_name: str
    store_street: str | None
    store_postal_code: str | None
    store_city: str | None
    store_country: str | None


class Candidate(NamedTuple):
    reservation: Selected
    recipient: Recipient | None  # None: excluded
    exclusion: Exclusion | None


@dataclass(frozen=True)
class Classification:
    candidates: list[Candidate]  # the selection's reservations, in selection order
    set_aside: list[tuple[str, Exclusion]] = field(default_factory=list)  # not found, duplicates

    @cached_property
    def retained(self) -> list[Candidate]:
        return [c for c in self.candidates if c.exclusion is None]

    @cached_property
    def excluded(self) -> list[tuple[str, Exclusion]]:
        """Every selected id not retained, with its reason: retained + excluded = selection."""
        return [(c.reservation.id, c.exclusion) for c in self.candidates if c.exclusion is not None] + self.set_aside


NOWHERE = Recipient(DeliveryTarget.NONE)  # rule 6: no address is queried


def _recipients(delivery: Delivery) -> Callable[[Selected], Recipient | None]:
    """Where a retained reservation's order goes under `delivery`, from its row: None when it has
    nowhere to go (target `store`, a store without a complete address)."""
    if delivery.target == DeliveryTarget.NONE:
        return lambda reservation: NOWHERE
    if delivery.target == DeliveryTarget.SINGLE_ADDRESS:
        return lambda reservation: delivery.address
    return _store_recipient


def _store_recipient(reservation: Selected) -> Recipient | None:
    recipient = _new_tuple(Recipient, _TO_STORE + reservation[6:])  # the store's name and address columns
    return recipient if recipient.has_address else None


# `tuple.__new__(cls, values)`: a NamedTuple of exactly these values, at half the cost of its own
# `__new__` or `_make` (which check the count): for the selection's rows and their recipients.
_new_tuple = tuple.__new__
_TO_STORE = (DeliveryTarget.STORE,)


# The selection in one statement, plain rows (`Selected`): `= ANY(%s)` takes the ids as one array
# parameter (an `IN` of 1,000 placeholders cost more to build, send and plan than to run).
SELECTION = (
    "SELECT r.id, r.industrial_organization_id, r.campaign_id, r.status, r.impression_status,"
    " a.promo_furniture_type_id, s.name, s.street, s.postal_code, s.city, s.country"
    " FROM reservation r JOIN ad_space a ON a.id = r.ad_space_id JOIN store s ON s.id = a.store_id"
    " WHERE r.id = ANY(%s) AND r.industrial_organization_id = %s"
)
# Sorted by id: two confirmations sharing reservations lock them in the same order.
SELECTION_LOCKED = SELECTION + " ORDER BY r.id FOR UPDATE OF r"


def _classify(batch: PrintOrderBatch, selection: list[str], delivery: Delivery, *, lock: bool) -> Classification:
    """Who of the selection is retained, in selection order, and why the others are not."""
    ids = list(dict.fromkeys(selection))
    rows = database.execute_sql(SELECTION_LOCKED if lock else SELECTION, (ids, batch.organization_id)).fetchall()
    found = {row[0]: _new_tuple(Selected, row) for row in rows}
    group, recipient_of = (batch.campaign_id, batch.promo_furniture_type_id), _recipients(delivery)
    candidates, seen, set_aside = [], set(), []
    for reservation_id in selection:
        if reservation_id in seen:
            set_aside.append((reservation_id, Exclusion.DUPLICATE))
            continue
        seen.add(reservation_id)
        reservation = found.get(reservation_id)
        if reservation is None:  # unknown, or another organization's
            set_aside.append((reservation_id, Exclusion.NOT_FOUND))
            continue
        reason = _exclusion(group, reservation)
        recipient = None if reason else recipient_of(reservation)
        if reason is None and recipient is None:
            reason = Exclusion.MISSING_ADDRESS
        candidates.append(_new_tuple(Candidate, (reservation, recipient, reason)))
    return Classification(candidates, set_aside)


def _exclusion(group: tuple[str, str], reservation: Selected) -> Exclusion | None:
    """Why a reservation of the batch's organization cannot join the batch of `group` (campaign,
    furniture type), or None."""
    if (reservation.campaign_id, reservation.promo_furniture_type_id) != group:
        return Exclusion.OTHER_GROUP
    if reservation.status != _APPROVED:
        return Exclusion.NOT_APPROVED
    return _eligibility(reservation)


class _LoadedBatch(NamedTuple):
    """A batch with what its preview and confirmation read: the current configuration of its
    furniture type (as `current_configuration` gives it) and its preflights."""

    batch: PrintOrderBatch
    configuration: Configuration
    attached: dict[tuple[str, int | None], str]  # (zone, face) -> asset of each preflight


_BATCH_FIELDS = tuple(f.name for f in PrintOrderBatch._meta.sorted_fields)
# The batch, its furniture type's current version with its zones (the version it was opened with
# when the type has no current one) and its preflights, in one prepared statement (they were five
# statements, 2 ms of a 1,000-store preview). Locked: the confirmation's.
_LOAD_SQL = (
    "SELECT " + ", ".join(f"b.{f.column_name}" for f in PrintOrderBatch._meta.sorted_fields) + ","  # noqa: S608
    " v.furniture_type_id, v.id, v.version, v.name, v.printer_organization_id,"
    " (SELECT json_agg(json_build_array(z.id, z.code, z.label, z.face_quantity, z.printable, z.width_mm,"
    " z.height_mm, z.position) ORDER BY z.position) FROM furniture_zone z WHERE z.furniture_type_version_id = v.id),"
    " (SELECT json_agg(json_build_array(p.zone_id, p.face_index, p.asset_id) ORDER BY p.zone_id, p.face_index"
    " NULLS FIRST) FROM print_preflight p WHERE p.batch_id = b.id)"
    " FROM print_order_batch b"
    " JOIN furniture_type_version f ON f.id = b.furniture_type_version_id"
    " JOIN furniture_type t ON t.id = f.furniture_type_id"
    " LEFT JOIN furniture_type_version c ON c.furniture_type_id = t.id AND c.version = t.current_version"
    " JOIN furniture_type_version v ON v.id = COALESCE(c.id, f.id)"
    " WHERE b.id = %(batch_id)s AND b.organization_id = %(organization_id)s"
)
_LOAD = prepared.Statement("print_batch_load", _LOAD_SQL)
_LOAD_LOCKED = prepared.Statement("print_batch_load_locked", _LOAD_SQL + " FOR UPDATE OF b")


def _load_batch(*, organization_id: str, batch_id: str, lock: bool) -> _LoadedBatch:
    """The organization's batch with its configuration and preflights; NotFound otherwise. The
    caller checks that it is a draft (a confirmation answers a sent batch again)."""
    statement = _LOAD_LOCKED if lock else _LOAD
    row = statement.execute({"batch_id": batch_id, "organization_id": organization_id}).fetchone()
    if row is None:
        raise NotFound("print batch not found")
    count = len(_BATCH_FIELDS)
    batch = PrintOrderBatch(__no_default__=1, **dict(zip(_BATCH_FIELDS, row[:count], strict=True)))
    type_id, version_id, version, name, printer, zones, attached = row[count:]
    configuration = Configuration(type_id, version_id, version, name, printer,
                                  tuple(ConfigurationZone(*zone) for zone in zones or ()))
    return _LoadedBatch(batch, configuration, {(zone, face): asset for zone, face, asset in attached or ()})


def _files(loaded: _LoadedBatch, slots: list[Slot] | None) -> list[DepositedFile]:
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


def _plan(loaded: _LoadedBatch, deposit: BatchDeposit, classification: Classification) -> allocation.DepositPlan:
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
        loaded.configuration.allocation_zones, [c.reservation.id for c in retained], files,
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
    plans = iter(plan.reservations)  # one per retained candidate, in the same order
    # Per distinct plan (the allocation shares its lines and reused faces between reservations):
    # its lines as answered, its printed panels and its reused faces, worked out once.
    shown: dict[tuple[int, int], tuple[list[dict], int, int]] = {}
    reservations = []
    for reservation, recipient, exclusion in classification.candidates:
        if exclusion is not None:
            reservations.append({
                "reservationId": reservation.id, "storeName": reservation.store_name,
                "classification": "excluded", "exclusionReason": exclusion.value, "recipient": None,
                "printedPanels": 0, "reusedFaces": 0, "lines": [],
            })
            continue
        planned = next(plans)
        key = (id(planned.lines), id(planned.reused))
        answer = shown.get(key)
        if answer is None:
            answer = shown[key] = ([{"zoneId": line.zone_id, "faceIndex": line.face_index, "quantity": line.quantity}
                                    for line in planned.lines], planned.printed_panels, len(planned.reused))
        lines, printed, reused = answer
        reservations.append({
            "reservationId": reservation.id, "storeName": reservation.store_name,
            "classification": "retained", "exclusionReason": None,
            "recipient": (f"{recipient.street}, {recipient.postal_code} {recipient.city}"
                          if recipient.has_address else None),
            "printedPanels": printed, "reusedFaces": reused, "lines": lines,
        })
    excluded = classification.excluded
    return {
        "batchId": batch_id,
        "recap": {
            "selectedPlacements": len(deposit.reservation_ids), "retained": len(classification.retained),
            "excluded": len(excluded), "ordersToCreate": len(plan.with_lines), "panelsToPrint": plan.panels_to_print,
            "reusedPanels": plan.reused_panels,
        },
        "zones": [{"zoneId": zone_id, "faces": t.faces, "printed": t.printed, "reused": t.reused}
                  for zone_id, t in plan.zones.items()],
        "reservations": reservations,
        "exclusions": [{"reservationId": rid, "reason": reason.value} for rid, reason in excluded],
    }


def preview_batch(*, batch_id: str, organization_id: str, deposit: BatchDeposit) -> Outcome:
    """The confirmation's classification and split, written nowhere (no lock, no transaction)."""
    loaded = _load_batch(organization_id=organization_id, batch_id=batch_id, lock=False)
    batch = _draft(loaded.batch)
    classification = _classify(batch, deposit.reservation_ids, deposit.delivery, lock=False)
    plan = _plan(loaded, deposit, classification)
    return Outcome(batch, summarize(batch.id, deposit, classification, plan))


def confirm_batch(*, batch_id: str, organization_id: str, deposit: BatchDeposit,
                  default_printer_organization_id: str | None) -> Outcome:
    """Confirm in one transaction. A batch already sent answers its first confirmation again
    (`replayed`, whatever the body now says): never a second set of orders."""
    with transaction():
        loaded = _load_batch(organization_id=organization_id, batch_id=batch_id, lock=True)
        batch, configuration = loaded.batch, loaded.configuration
        if batch.status == SENT:
            codes = dict(PrintOrder.select(PrintOrder.reservation_id, PrintOrder.code)
                         .where(PrintOrder.batch_id == batch.id).tuples())
            return Outcome(batch, batch.confirmation, order_codes=codes, replayed=True)
        classification = _classify(batch, deposit.reservation_ids, deposit.delivery, lock=True)
        retained = classification.retained
        plan = _plan(loaded, deposit, classification)
        summary = summarize(batch.id, deposit, classification, plan)
        printer = printer_for(configuration, default_printer_organization_id) if plan.with_lines else None
        writes = [PlanWrite(c.reservation, p, c.recipient) for c, p in zip(retained, plan.reservations, strict=True)]
        written = write_plans(writes, printer_organization_id=printer, status=PrintOrderStatus.PENDING,
                              batch_id=batch.id)
        if not written.orders:  # rule 8: every zone reused, no order: no batch and no code
            PrintOrderBatch.delete().where(PrintOrderBatch.id == batch.id).execute()
            return Outcome(None, summary)
        moment = clock.now()
        batch.code, batch.status, batch.sent_at, batch.updated_at = allocate_batch_code(), SENT, moment, moment
        batch.printer_organization_id, batch.delivery_target = printer, deposit.delivery.target
        batch.furniture_type_version_id = configuration.version_id  # the version the orders were made from
        batch.confirmation = summary
        batch.save()
        state = _written_state(batch, configuration, written)
    return Outcome(batch, summary, order_codes=written.codes, written=state)


_NAMES = "SELECT c.name, i.legal_name FROM campaign c JOIN organization i ON i.id = %s WHERE c.id = %s"


def _written_state(batch: PrintOrderBatch, configuration: Configuration, written: WrittenPlans) -> BatchState:
    """The batch as `batch_state` reads it once confirmed, built from what the confirmation wrote:
    its orders and lines (`order_views.batch_items_of`) are not read back."""
    attached = preflights.preflights_of(preflights.Owner(batch_id=batch.id))
    technical_names = {preflight.asset_id: preflight.asset.technical_name for preflight in attached}
    campaign_name, industrial_name = database.execute_sql(_NAMES, (batch.organization_id, batch.campaign_id)).fetchone()
    zones = {zone.id: zone for zone in configuration.zones}
    at = clock.iso(written.moment)
    shared: dict[int, list[ItemLine]] = {}  # the line rows of each distinct plan (the allocation shares them)
    orders = []
    for order_id, code, write in written.orders:
        reservation: Selected = write.reservation
        order = ItemOrder(order_id, code, PrintOrderStatus.PENDING.value, batch.code, batch.id, reservation.campaign_id,
                          campaign_name, industrial_name, reservation.store_name, reservation.store_city,
                          str(write.recipient.target), at, at, reservation.id)
        lines = shared.get(id(write.plan.lines))
        if lines is None:
            lines = shared[id(write.plan.lines)] = [
                ItemLine(None, line.position, line.zone_id, zone.code, zone.label, zone.width_mm, zone.height_mm,
                         line.face_index, line.quantity, line.asset_id, technical_names.get(line.asset_id))
                for line, zone in ((line, zones[line.zone_id]) for line in write.plan.lines)]
        orders.append((order, lines))
    return BatchState(batch, configuration, batch_items_of(orders), attached)
