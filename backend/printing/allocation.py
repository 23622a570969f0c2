"""The shared calculation of spec B: what each reservation prints and reuses, from a furniture
configuration, a population of reservations, the deposited files and the reuse declarations.

Pure: no database, no clock, no I/O. The single deposit, the batch preview and the batch
confirmation all call `plan_deposit`; a single deposit is the degenerate batch (one reservation,
no stock total: reuse is a per-slot switch).

A deposit slot is (zone, face): `face_index` None is the whole zone (one visual for every face,
"same visual"), an integer is one face ("one visual per face"). Each printable zone is deposited
in one of the two modes. What the plan gives per reservation:

- lines: a same-visual zone gives one line whose quantity is the faces it prints there (the face
  quantity, less the stock allocated to it); a per-face zone gives one line of quantity 1 per face
  with a file. Quantities come from the configuration, never from the client.
- reused faces, one per face, whatever path declared them, so persisted rows are identical
  whether a zone was switched to reuse as a whole, face by face, or by the print-support
  declaration.

Stock (batch, same visual only) is a total for the whole population of a zone: allocated from the
first reservations of the selection, a reservation taking as much as its furniture holds before
the next one takes any; or split explicitly by `allocations` ({zoneId: {reservationId: printed}}).
Either way the invariant sum(printed) + reused = face quantity x population holds, checked here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import NamedTuple

from backend.errors import ValidationError


class SupportMode(StrEnum):
    PRINT = "print"
    HYBRID = "hybrid"
    REUSE_ALL = "reuse_all"


@dataclass(frozen=True)
class Zone:
    id: str
    label: str
    face_quantity: int
    printable: bool


@dataclass(frozen=True)
class Slot:
    zone_id: str
    face_index: int | None = None


@dataclass(frozen=True)
class DepositedFile:
    zone_id: str
    face_index: int | None
    asset_id: str


@dataclass(frozen=True)
class PlannedLine:
    zone_id: str
    face_index: int | None
    asset_id: str
    quantity: int
    position: int
    qualifiers: tuple[str, ...]


class ReservationPlan(NamedTuple):
    """One reservation's plan (a tuple: a batch makes one per reservation)."""

    reservation_id: str
    lines: tuple[PlannedLine, ...]
    reused: tuple[Slot, ...]  # one per reused face

    @property
    def printed_panels(self) -> int:
        return printed_panels(self.lines)

    @property
    def support_mode(self) -> SupportMode:
        if not self.reused:
            return SupportMode.PRINT
        return SupportMode.REUSE_ALL if not self.lines else SupportMode.HYBRID


def printed_panels(lines: Iterable[PlannedLine]) -> int:
    return sum(line.quantity for line in lines)


# `tuple.__new__(ReservationPlan, values)`: the plan of one reservation without the count check of
# the NamedTuple's own `__new__` (one per reservation of a batch).
_new_tuple = tuple.__new__


@dataclass(frozen=True)
class ZoneTotal:
    faces: int  # face quantity x population
    printed: int
    reused: int


@dataclass(frozen=True)
class DepositPlan:
    """Every reservation's plan. A reservation's plan depends only on its key (what it prints in
    each same-visual zone): `planned` holds each distinct key's lines and reused faces once, and
    `keys` the key of each reservation, in the order of `reservation_ids`, `population` how many
    reservations have each key."""

    reservation_ids: Sequence[str]
    keys: Sequence[tuple[int, ...]]
    planned: Mapping[tuple[int, ...], tuple[tuple[PlannedLine, ...], tuple[Slot, ...]]]
    population: Mapping[tuple[int, ...], int]
    zones: Mapping[str, ZoneTotal]  # per printable zone: the totals the invariant was checked on

    @cached_property
    def reservations(self) -> tuple[ReservationPlan, ...]:
        """One plan per reservation, in order; those of the same key share its lines and reused faces."""
        planned = self.planned
        return tuple([_new_tuple(ReservationPlan, (r, *planned[key]))
                      for r, key in zip(self.reservation_ids, self.keys, strict=True)])

    @property
    def with_lines(self) -> tuple[ReservationPlan, ...]:
        """The reservations that get an order (rule 7: at least one printed panel)."""
        return tuple(plan for plan in self.reservations if plan.lines)

    @cached_property
    def orders(self) -> int:
        """How many reservations get an order (`with_lines`, counted per key)."""
        return sum(self.population[key] for key, (lines, _) in self.planned.items() if lines)

    @property
    def panels_to_print(self) -> int:
        return sum(total.printed for total in self.zones.values())

    @property
    def reused_panels(self) -> int:
        return sum(total.reused for total in self.zones.values())


class AllocationInvariantBroken(RuntimeError):
    """sum(printed) + reused != faces: a bug, never a client error."""


def face_label(face_index: int) -> str:
    return f"face {face_index + 1}"


def _refuse(message: str, *, zone: Zone | str, face_index: int | None = None, **details: object) -> ValidationError:
    zone_id = zone.id if isinstance(zone, Zone) else zone
    return ValidationError(message, zoneId=zone_id, faceIndex=face_index, **details)


def _printable_zone(zones: Mapping[str, Zone], zone_id: str, face_index: int | None) -> Zone:
    """Refusal 1: a zone outside the reservation's configuration (or not printable)."""
    zone = zones.get(zone_id)
    if zone is None:
        raise _refuse(f"zone {zone_id} is not in the furniture configuration", zone=zone_id, face_index=face_index)
    if not zone.printable:
        raise _refuse(f"zone {zone.label} is not printable", zone=zone, face_index=face_index)
    return zone


def _mixes_modes(taken, face_index: int | None) -> bool:
    """A whole-zone slot next to per-face slots of the same zone."""
    return bool(taken) and ((None in taken) != (face_index is None))


def _slots_by_zone(zones: Mapping[str, Zone], files: Sequence[DepositedFile], reused_slots: Iterable[Slot]):
    """Files and reuse switches per zone, after refusals 1 to 3."""
    files_by_zone: dict[str, dict[int | None, str]] = {}
    reuse_by_zone: dict[str, set[int | None]] = {}
    for file in files:
        zone = _printable_zone(zones, file.zone_id, file.face_index)
        taken = files_by_zone.setdefault(zone.id, {})
        # Refusal 2: more files than faces (a face past the last, a slot given twice, or a
        # visual for the whole zone next to visuals per face).
        if file.face_index is not None and file.face_index >= zone.face_quantity:
            raise _refuse(f"zone {zone.label} has {zone.face_quantity} face(s) (faceIndex 0 to "
                          f"{zone.face_quantity - 1}): no faceIndex {file.face_index}",
                          zone=zone, face_index=file.face_index)
        if file.face_index in taken or _mixes_modes(taken, file.face_index):
            raise _refuse(f"zone {zone.label} has more files than faces", zone=zone, face_index=file.face_index)
        taken[file.face_index] = file.asset_id
    for slot in reused_slots:
        zone = _printable_zone(zones, slot.zone_id, slot.face_index)
        declared = reuse_by_zone.setdefault(zone.id, set())
        # Refusal 3: a reuse declaration above the zone's capacity.
        if slot.face_index is not None and slot.face_index >= zone.face_quantity:
            raise _refuse(f"zone {zone.label} has {zone.face_quantity} face(s) (faceIndex 0 to "
                          f"{zone.face_quantity - 1}): faceIndex {slot.face_index} cannot be reused",
                          zone=zone, face_index=slot.face_index)
        if slot.face_index in declared or _mixes_modes(declared, slot.face_index):
            raise _refuse(f"the reuse declared on zone {zone.label} exceeds its capacity", zone=zone,
                          face_index=slot.face_index)
        printed = files_by_zone.get(zone.id, {})
        if slot.face_index in printed or (printed and (slot.face_index is None or None in printed)):
            raise _refuse(f"zone {zone.label}: a face cannot be both printed and reused", zone=zone,
                          face_index=slot.face_index)
        declared.add(slot.face_index)
    return files_by_zone, reuse_by_zone


def _check_stock(zones: Mapping[str, Zone], stock: Mapping[str, int], files_by_zone, reuse_by_zone,
                 population: int) -> None:
    for zone_id, quantity in stock.items():
        zone = _printable_zone(zones, zone_id, None)
        if quantity < 0:
            raise _refuse(f"zone {zone.label}: a stock cannot be negative", zone=zone)
        if any(face is not None for face in files_by_zone.get(zone_id, {})) or zone_id in reuse_by_zone:
            raise _refuse(f"zone {zone.label}: a stock total applies to a zone deposited with one visual", zone=zone)
        capacity = zone.face_quantity * population
        if quantity > capacity:
            raise _refuse(f"the stock declared on zone {zone.label} ({quantity}) exceeds its capacity ({capacity})",
                          zone=zone, capacity=capacity, declared=quantity)


def _split_stock(zone: Zone, ids: Sequence[str], stock: int, explicit: Mapping[str, int] | None) -> list[int]:
    """Printed panels of a same-visual zone per reservation, in the order of `ids`."""
    faces = zone.face_quantity
    if explicit is None:  # the first reservations of the selection take the stock, whole furniture first
        printed = [faces] * len(ids)
        full, part = divmod(stock, faces) if faces else (0, 0)  # full <= len(ids): stock <= capacity
        printed[:full] = [0] * full
        if part:
            printed[full] = faces - part
        return printed
    missing = [r for r in ids if r not in explicit]
    if missing:
        raise _refuse(f"zone {zone.label}: the allocation leaves out retained reservations", zone=zone,
                      reservationIds=missing)
    unknown = sorted(set(explicit) - set(ids))
    if unknown:
        raise _refuse(f"zone {zone.label}: the allocation names reservations that are not retained", zone=zone,
                      reservationIds=unknown)
    for reservation_id, printed in explicit.items():
        if not 0 <= printed <= faces:
            raise _refuse(f"zone {zone.label}: a reservation prints between 0 and {faces} panel(s)", zone=zone,
                          reservationId=reservation_id, printed=printed)
    total = sum(explicit.values()) + stock
    if total != faces * len(ids):
        raise _refuse(f"zone {zone.label}: printed panels plus stock ({total}) must equal the faces of the "
                      f"population ({faces * len(ids)})", zone=zone, expected=faces * len(ids), actual=total)
    return [explicit[r] for r in ids]


class _ZoneDeposit(NamedTuple):
    """How a printable zone is deposited. Same visual (`split` set): the reservation's printed
    count, `split` its index in the plan's key, gives one line of that quantity and its first faces
    reused. Otherwise the same `lines` (face, asset, qualifiers) and `reused` for everyone."""

    zone: Zone
    asset_id: str | None
    split: int | None
    labels: tuple[str, ...]
    slots: tuple[Slot, ...]
    lines: tuple[tuple[int, str, tuple[str, ...]], ...] = ()
    reused: tuple[Slot, ...] = ()


def _zone_deposits(zones: Sequence[Zone], ids: Sequence[str], files_by_zone, reuse_by_zone,
                   stock: Mapping[str, int], allocations: Mapping[str, Mapping[str, int]]):
    """Each printable zone's deposit, and the printed counts of the same-visual ones (one list per
    such zone, one count per reservation), after refusal 4 and the checks of the stock split."""
    deposits: list[_ZoneDeposit] = []
    counts: list[list[int]] = []
    for zone in (z for z in zones if z.printable):
        deposited, declared = files_by_zone.get(zone.id, {}), reuse_by_zone.get(zone.id, set())
        faces = range(zone.face_quantity)
        labels = tuple(face_label(f) for f in faces)
        slots = tuple(Slot(zone.id, f) for f in faces)
        if not deposited and not declared and zone.id not in stock:
            raise _refuse(f"zone {zone.label} has neither a file nor a reuse declaration", zone=zone)
        if None in deposited or not (deposited or declared):
            asset_id = deposited.get(None)
            printed = _split_stock(zone, ids, stock.get(zone.id, 0), allocations.get(zone.id))
            if asset_id is None and any(printed):
                raise _refuse(f"zone {zone.label} has faces with neither a file nor a reuse declaration", zone=zone)
            deposits.append(_ZoneDeposit(zone, asset_id, len(counts), labels, slots))
            counts.append(printed)
        elif None in declared:
            deposits.append(_ZoneDeposit(zone, None, None, labels, slots, reused=slots))
        else:
            lines, reused = [], []
            for face in faces:
                asset_id = deposited.get(face)
                if asset_id is None and face not in declared:
                    raise _refuse(f"zone {zone.label}, faceIndex {face}: neither a file nor a reuse declaration",
                                  zone=zone, face_index=face)
                if asset_id is None:
                    reused.append(slots[face])
                else:
                    lines.append((face, asset_id, (labels[face],)))
            deposits.append(_ZoneDeposit(zone, None, None, labels, slots, tuple(lines), tuple(reused)))
    return deposits, counts


def _reservation_plan(deposits: Sequence[_ZoneDeposit], key: tuple[int, ...]):
    """The lines and reused faces of a reservation whose same-visual zones print `key`."""
    lines: list[PlannedLine] = []
    reused: list[Slot] = []
    for deposit in deposits:
        zone = deposit.zone
        if deposit.split is None:
            lines += [PlannedLine(zone.id, face, asset_id, 1, len(lines) + n, qualifiers)
                      for n, (face, asset_id, qualifiers) in enumerate(deposit.lines)]
            reused += deposit.reused
            continue
        count = key[deposit.split]
        if count:
            lines.append(PlannedLine(zone.id, None, deposit.asset_id, count, len(lines), deposit.labels))
        reused += deposit.slots[:zone.face_quantity - count]
    return tuple(lines), tuple(reused)


def plan_deposit(
    zones: Sequence[Zone],
    reservation_ids: Sequence[str],
    files: Sequence[DepositedFile],
    *,
    reused_slots: Iterable[Slot] = (),
    stock: Mapping[str, int] | None = None,
    allocations: Mapping[str, Mapping[str, int]] | None = None,
) -> DepositPlan:
    """The plan of every reservation of `reservation_ids` (in selection order); VALIDATION_ERROR
    (with `zoneId`, `faceIndex` in the details) for refusals 1 to 4 and bad allocations.

    A reservation's plan depends only on what it prints in each same-visual zone (its key): each
    distinct key is planned once and its lines and reused faces (immutable) are shared by every
    reservation with that key (a large batch has a handful of keys)."""
    by_id = {zone.id: zone for zone in zones}
    stock, allocations = stock or {}, allocations or {}
    ids = list(dict.fromkeys(reservation_ids))
    files_by_zone, reuse_by_zone = _slots_by_zone(by_id, files, reused_slots)
    _check_stock(by_id, stock, files_by_zone, reuse_by_zone, len(ids))
    for zone_id in allocations:
        zone = _printable_zone(by_id, zone_id, None)
        if None not in files_by_zone.get(zone_id, {}):
            raise _refuse(f"zone {zone.label}: an allocation applies to a zone printed with one visual", zone=zone)
    deposits, counts = _zone_deposits(zones, ids, files_by_zone, reuse_by_zone, stock, allocations)
    keys = list(zip(*counts, strict=True)) if counts else [()] * len(ids)
    population = Counter(keys)
    planned = {key: _reservation_plan(deposits, key) for key in population}
    # Zone totals counted from the lines and reused faces planned, each times its population.
    printed = dict.fromkeys((d.zone.id for d in deposits), 0)
    reused = dict(printed)
    for key, (lines, slots) in planned.items():
        for line in lines:
            printed[line.zone_id] += line.quantity * population[key]
        for slot in slots:
            reused[slot.zone_id] += population[key]
    totals = {d.zone.id: _zone_total(d.zone, len(ids), printed[d.zone.id], reused[d.zone.id]) for d in deposits}
    return DepositPlan(ids, keys, planned, population, totals)


def _zone_total(zone: Zone, population: int, printed: int, reused: int) -> ZoneTotal:
    """The zone's totals, counted from its lines and reused faces, checked against its faces."""
    total = ZoneTotal(zone.face_quantity * population, printed, reused)
    if total.printed + total.reused != total.faces:
        raise AllocationInvariantBroken(f"zone {zone.id}: {printed} printed + {reused} reused != {total.faces}")
    return total
