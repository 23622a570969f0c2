"""The deposit side of reservations as lists show it: the industrial's impressions
(`ImpressionListItem`), the admin's deposits to review, and the active order of reservations.

A reservation's active order is its latest order that is not cancelled (drafts included); its
`batchCode` and `printOrderStatus` come from it, resolved for a whole page in one query
(spec B, listing rule 2). A page is therefore two queries, whatever its size.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from peewee import JOIN, fn

from backend.identity.models import Organization
from backend.listing import ListParams, Page, paginate
from backend.marketplace.models import (
    AdSpace,
    Campaign,
    FurnitureType,
    FurnitureTypeVersion,
    FurnitureZone,
    Reservation,
    ReservationStatus,
    Store,
)
from backend.printing.models import ImpressionStatus, PrintOrder, PrintOrderBatch
from backend.printing.status import PrintOrderStatus

DEPOSIT_RESERVATION_STATUSES = (ReservationStatus.APPROVED, ReservationStatus.COMPLETED)


class Action(NamedTuple):
    code: str
    label: str


VIEW_ORDER = Action("view_order", "Voir la commande")
MANAGE_PRINT = Action("manage_print", "Gérer l'impression")


@dataclass(frozen=True)
class OrderSummary:
    code: str
    status: str
    batch_code: str | None
    created_at: datetime


def active_orders(reservation_ids: list[str]) -> dict[str, OrderSummary]:
    """The active order of each reservation that has one, with its batch code: one query."""
    if not reservation_ids:
        return {}
    rows = (
        PrintOrder.select(PrintOrder.reservation_id, PrintOrder.code, PrintOrder.status, PrintOrder.created_at,
                          PrintOrderBatch.code.alias("batch_code"))
        .join(PrintOrderBatch, JOIN.LEFT_OUTER, on=PrintOrder.batch_id == PrintOrderBatch.id)
        .where(PrintOrder.reservation_id.in_(reservation_ids), PrintOrder.status != PrintOrderStatus.CANCELLED)
        .distinct(PrintOrder.reservation_id)
        .order_by(PrintOrder.reservation_id, PrintOrder.created_at.desc(), PrintOrder.id.desc())
        .objects()
    )
    return {row.reservation_id: OrderSummary(row.code, row.status, row.batch_code, row.created_at) for row in rows}


def with_print_orders(reservations: list) -> list:
    """Attach each reservation's active print order as `print_order` (one query for all): its code,
    status and batch code, for the reservation answers."""
    orders = active_orders([r.id for r in reservations])
    for reservation in reservations:
        reservation.print_order = orders.get(reservation.id)
    return reservations


def shown_impression_status(stored: str | None, reservation_status: str) -> str | None:
    """An approved reservation not yet seen by the printing consumer is already `to_deposit`."""
    if stored is None and reservation_status in DEPOSIT_RESERVATION_STATUSES:
        return ImpressionStatus.TO_DEPOSIT.value
    return stored


def _impression_column():
    return fn.COALESCE(Reservation.impression_status, ImpressionStatus.TO_DEPOSIT.value)


def _printable_zone_count():
    """Printable zones of the reservation's furniture type as it is now (a deposit reads that one)."""
    frozen, current = FurnitureTypeVersion.alias("frozen"), FurnitureTypeVersion.alias("current")
    return (
        FurnitureZone.select(fn.COUNT(FurnitureZone.id))
        .join(current, on=(FurnitureZone.furniture_type_version == current.id))
        .join(FurnitureType, on=(current.furniture_type == FurnitureType.id))
        .join(frozen, on=(frozen.furniture_type == FurnitureType.id))
        .where(frozen.id == Reservation.furniture_type_version, current.version == FurnitureType.current_version,
               FurnitureZone.printable)
    )


def _deposit_reservations():
    return (
        Reservation.select(Reservation, AdSpace, Store, Campaign, Organization.id, Organization.legal_name,
                           _printable_zone_count().alias("printable_zone_count"))
        .join(AdSpace)
        .join(Store)
        .switch(Reservation)
        .join(Campaign)
        .switch(Reservation)
        .join(Organization, on=Reservation.industrial_organization_id == Organization.id, attr="industrial")
        .where(Reservation.status.in_(DEPOSIT_RESERVATION_STATUSES))
    )


@dataclass(frozen=True)
class ImpressionItem:
    reservation: Reservation
    impression_status: str
    order: OrderSummary | None

    @property
    def printable_zone_count(self) -> int:
        return self.reservation.printable_zone_count

    @property
    def action(self) -> Action:
        """Spec B rule 8: view the order while it is reviewed or validated, else manage the print."""
        return VIEW_ORDER if self.impression_status in ("in_review", "validated") else MANAGE_PRINT

    @property
    def route(self) -> str:
        """Spec B rule 7: the campaign's batch wizard for a reservation still to deposit whose
        furniture has a printable zone, else the reservation's own page."""
        reservation = self.reservation
        if (reservation.campaign_id and self.impression_status == ImpressionStatus.TO_DEPOSIT
                and self.printable_zone_count > 0):
            return f"/industrial/campaign/{reservation.campaign_id}/impressions"
        return f"/industrial/impressions/{reservation.id}"


SORTS = {
    "startsAt": Reservation.starts_at,
    "createdAt": Reservation.created_at,
    "updatedAt": Reservation.updated_at,
    "impressionStatus": _impression_column(),
    "storeName": Store.name,
}


def _items(page: Page) -> Page:
    orders = active_orders([r.id for r in page.items])
    items = [ImpressionItem(r, shown_impression_status(r.impression_status, r.status), orders.get(r.id))
             for r in page.items]
    return Page(items, page.total, page.page, page.page_size)


def impressions(
    *, organization_id: str, params: ListParams, campaign_id: str | None = None,
    impression_status: str | None = None,
) -> Page:
    """The industrial's approved reservations with their deposit and order status."""
    query = _deposit_reservations().where(Reservation.industrial_organization_id == organization_id)
    if campaign_id:
        query = query.where(Reservation.campaign == campaign_id)
    if impression_status:
        query = query.where(_impression_column() == impression_status)
    return _items(paginate(query, params, sorts=SORTS, default_sort="startsAt", tiebreaker=Reservation.id,
                           search_columns=(AdSpace.name, Store.name, Store.city, Campaign.name)))


def impression(*, organization_id: str, reservation_id: str) -> ImpressionItem | None:
    query = _deposit_reservations().where(Reservation.industrial_organization_id == organization_id,
                                          Reservation.id == reservation_id)
    page = _items(Page(list(query), 1, 1, 1))
    return page.items[0] if page.items else None


def deposits_to_review(*, params: ListParams, impression_status: str = ImpressionStatus.IN_REVIEW.value) -> Page:
    """Admin: reservations whose deposit is in `impression_status` (default `in_review`), each with
    its active order (the draft to release)."""
    query = _deposit_reservations().where(_impression_column() == impression_status)
    return _items(paginate(query, params, sorts=SORTS, default_sort="updatedAt", tiebreaker=Reservation.id,
                           search_columns=(Campaign.name, Store.name, Organization.legal_name)))
