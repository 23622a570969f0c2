"""The admin "faces" list (Specification A): every face of every ad space, with what is printed
there, for the back-office to see what goes where.

A face is a zone of the ad space's furniture type as configured now (its current version, the
configuration a deposit reads) and a face index from 1 to the zone's face quantity
(`AdSpaceFace`, a view). Beside it:
- its reservation: the ad space's `approved` or `completed` reservation that has not ended yet
  and starts first (the one running now, else the next one), or none;
- the visual deposited for it: on that reservation's active print order (any status but
  `cancelled`, drafts included: a deposit in review), the line of the face's zone for this face,
  else the line for the whole zone (a null face index); none when nothing is deposited;
- `supportReused`: the deposit declared this face's support already in stock.

One SQL statement per page: the reservation, order and line are correlated subqueries joined on.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from peewee import JOIN

from backend import clock
from backend.listing import ListParams, Page, paginate
from backend.marketplace.models import (
    AdSpace,
    FurnitureTypeVersion,
    FurnitureZone,
    Reservation,
    ReservationStatus,
    Store,
)
from backend.printing.models import AdSpaceFace, PrintAsset, PrintOrder, PrintOrderLine, PrintReusedFace
from backend.printing.status import PrintOrderStatus

# The reservations whose faces are (or will be) printed.
PRINTED_RESERVATIONS = (ReservationStatus.APPROVED, ReservationStatus.COMPLETED)

@dataclass(frozen=True)
class FaceStore:
    id: str
    name: str
    city: str


@dataclass(frozen=True)
class FaceAdSpace:
    id: str
    name: str


@dataclass(frozen=True)
class FaceFurnitureType:
    id: str
    name: str
    version: int


@dataclass(frozen=True)
class FaceZone:
    id: str
    code: str
    label: str
    printable: bool
    face_quantity: int
    width_mm: int
    height_mm: int


@dataclass(frozen=True)
class FaceReservation:
    id: str
    status: str
    starts_at: datetime
    ends_at: datetime
    industrial_organization_id: str
    impression_status: str | None


@dataclass(frozen=True)
class FaceVisual:
    asset_id: str
    name: str | None
    whole_zone: bool  # deposited once for every face of the zone
    print_order_code: str
    print_order_status: str


@dataclass(frozen=True)
class Face:
    id: str  # <adSpaceId>/<zoneId>/<face index on 4 digits>
    store: FaceStore
    ad_space: FaceAdSpace
    furniture_type: FaceFurnitureType
    zone: FaceZone
    face_index: int
    reservation: FaceReservation | None
    visual: FaceVisual | None
    support_reused: bool


FACE_SORTS = {
    "store": Store.name, "city": Store.city, "adSpace": AdSpace.name, "furnitureType": FurnitureTypeVersion.name,
    "zone": FurnitureZone.code, "faceIndex": AdSpaceFace.face_index,
}


def list_faces(params: ListParams, *, store_id: str | None = None, deposited: bool | None = None) -> Page:
    """Every face, server-paginated; search on store, city, ad space, furniture type, zone code and
    label, and the visual's name; sorted by store (default), then ad space, zone position and face."""
    reservation, candidate = Reservation.alias("reservation"), Reservation.alias("candidate")
    order, newer = PrintOrder.alias("face_order"), PrintOrder.alias("newer_order")
    line, other = PrintOrderLine.alias("face_line"), PrintOrderLine.alias("other_line")
    reused = PrintReusedFace.alias("reused")
    current_reservation = (
        candidate.select(candidate.id)
        .where(candidate.ad_space == AdSpaceFace.ad_space_id, candidate.status.in_(list(PRINTED_RESERVATIONS)),
               candidate.ends_at > clock.now())
        .order_by(candidate.starts_at, candidate.id).limit(1))
    active_order = (
        newer.select(newer.id)
        .where(newer.reservation_id == reservation.id, newer.status != PrintOrderStatus.CANCELLED)
        .order_by(newer.created_at.desc(), newer.id.desc()).limit(1))
    face_line = (
        other.select(other.id)
        .where(other.order == order.id, other.zone_id == AdSpaceFace.zone_id,
               other.face_index.is_null() | (other.face_index == AdSpaceFace.face_index))
        .order_by(other.face_index.asc(nulls="LAST")).limit(1))
    query = (
        AdSpaceFace.select(
            AdSpaceFace, Store.name.alias("store_name"), Store.city.alias("store_city"),
            AdSpace.name.alias("ad_space_name"), FurnitureTypeVersion.furniture_type.alias("furniture_type_id"),
            FurnitureTypeVersion.name.alias("furniture_type_name"), FurnitureTypeVersion.version.alias("version"),
            FurnitureZone.code.alias("zone_code"), FurnitureZone.label.alias("zone_label"),
            FurnitureZone.printable.alias("printable"), FurnitureZone.face_quantity.alias("face_quantity"),
            FurnitureZone.width_mm.alias("width_mm"), FurnitureZone.height_mm.alias("height_mm"),
            reservation.id.alias("reservation_id"), reservation.status.alias("reservation_status"),
            reservation.starts_at.alias("starts_at"), reservation.ends_at.alias("ends_at"),
            reservation.industrial_organization_id.alias("industrial_organization_id"),
            reservation.impression_status.alias("impression_status"),
            order.code.alias("print_order_code"), order.status.alias("print_order_status"),
            line.asset_id.alias("asset_id"), line.face_index.alias("line_face_index"),
            PrintAsset.original_name.alias("asset_name"), reused.id.alias("reused_id"))
        .join(AdSpace, on=AdSpace.id == AdSpaceFace.ad_space_id)
        .join_from(AdSpaceFace, Store, on=Store.id == AdSpaceFace.store_id)
        .join_from(AdSpaceFace, FurnitureTypeVersion,
                   on=FurnitureTypeVersion.id == AdSpaceFace.furniture_type_version_id)
        .join_from(AdSpaceFace, FurnitureZone, on=FurnitureZone.id == AdSpaceFace.zone_id)
        .join_from(AdSpaceFace, reservation, JOIN.LEFT_OUTER, on=reservation.id == current_reservation)
        .join_from(AdSpaceFace, order, JOIN.LEFT_OUTER, on=order.id == active_order)
        .join_from(AdSpaceFace, line, JOIN.LEFT_OUTER, on=line.id == face_line)
        .join_from(line, PrintAsset, JOIN.LEFT_OUTER, on=PrintAsset.id == line.asset_id)
        .join_from(AdSpaceFace, reused, JOIN.LEFT_OUTER, on=(
            (reused.reservation_id == reservation.id) & (reused.zone_id == AdSpaceFace.zone_id)
            & (reused.face_index == AdSpaceFace.face_index)))
        .objects()
    )
    if store_id:
        query = query.where(AdSpaceFace.store_id == store_id)
    if deposited is not None:
        query = query.where(line.id.is_null(not deposited))
    page = paginate(query, params, sorts=FACE_SORTS, default_sort="store", tiebreaker=AdSpaceFace.sort_key,
                    search_columns=(Store.name, Store.city, AdSpace.name, FurnitureTypeVersion.name,
                                    FurnitureZone.code, FurnitureZone.label, PrintAsset.original_name))
    return replace(page, items=[_face(row) for row in page.items])


def _face(row) -> Face:
    return Face(
        id=row.id, face_index=row.face_index, support_reused=row.reused_id is not None,
        store=FaceStore(row.store_id, row.store_name, row.store_city),
        ad_space=FaceAdSpace(row.ad_space_id, row.ad_space_name),
        furniture_type=FaceFurnitureType(row.furniture_type_id, row.furniture_type_name, row.version),
        zone=FaceZone(row.zone_id, row.zone_code, row.zone_label, row.printable, row.face_quantity, row.width_mm,
                      row.height_mm),
        reservation=None if row.reservation_id is None else FaceReservation(
            row.reservation_id, row.reservation_status, row.starts_at, row.ends_at, row.industrial_organization_id,
            row.impression_status),
        visual=None if row.asset_id is None else FaceVisual(
            row.asset_id, row.asset_name, row.line_face_index is None, row.print_order_code,
            row.print_order_status),
    )
