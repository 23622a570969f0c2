"""Persisting a reservation's deposit plan: its print order and lines, its reused faces, its
support mode and deposit status. The single deposit writes one plan, a batch confirmation one per
retained reservation; both go through `write_plans`, so the rows are the same whichever path made
them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple, Protocol

from backend import clock
from backend.db import array_literal, copy_rows, database
from backend.marketplace.models import Store
from backend.model import new_id
from backend.printing.allocation import ReservationPlan
from backend.printing.models import DeliveryTarget, ImpressionStatus, PrintOrder, PrintReusedFace
from backend.printing.orders import allocate_order_codes, impression_for
from backend.printing.status import PrintOrderStatus


class Recipient(NamedTuple):
    """Where an order is shipped, frozen on the order (a tuple: a large batch makes one per store,
    and a frozen dataclass costs its preview several times more)."""

    target: DeliveryTarget
    name: str | None = None
    street: str | None = None
    postal_code: str | None = None
    city: str | None = None
    country: str | None = None

    @classmethod
    def of_store(cls, store: Store) -> Recipient:
        return cls(DeliveryTarget.STORE, store.name, store.street, store.postal_code, store.city, store.country)

    @property
    def has_address(self) -> bool:
        return bool(self.street and self.postal_code and self.city)

    COLUMNS = ("delivery_target", "recipient_name", "recipient_street", "recipient_postal_code", "recipient_city",
               "recipient_country")

    def values(self) -> tuple:
        """The values of `COLUMNS`, in that order."""
        return (str(self.target), self.name, self.street, self.postal_code, self.city, self.country)

    def columns(self) -> dict:
        return dict(zip(self.COLUMNS, self.values(), strict=True))


def formatted_address(order: PrintOrder) -> str | None:
    """`3 quai Napoléon III, 74200 Thonon-les-Bains` (country shown outside France); None when
    nothing is shipped."""
    if order.delivery_target == DeliveryTarget.NONE or not order.recipient_street:
        return None
    country = "" if order.recipient_country == "FR" else f", {order.recipient_country}"
    return f"{order.recipient_street}, {order.recipient_postal_code} {order.recipient_city}{country}"


def discard_draft(reservation_id: str) -> None:
    """Delete the reservation's draft order (never released to a printer) and its reused faces,
    before a new deposit replaces them."""
    PrintOrder.delete().where(
        PrintOrder.reservation_id == reservation_id, PrintOrder.status == PrintOrderStatus.DRAFT
    ).execute()
    PrintReusedFace.delete().where(PrintReusedFace.reservation_id == reservation_id).execute()


class PlannedReservation(Protocol):
    """What writing a plan reads of its reservation (a model row, or a batch's selected row)."""

    id: str
    industrial_organization_id: str


@dataclass(frozen=True)
class PlanWrite:
    """One reservation's plan and where its order goes."""

    reservation: PlannedReservation
    plan: ReservationPlan
    recipient: Recipient


class WrittenOrder(NamedTuple):
    id: str
    code: str
    write: PlanWrite


@dataclass(frozen=True)
class WrittenPlans:
    """What `write_plans` wrote, for an answer that shows it without reading it back."""

    orders: list[WrittenOrder]  # one per plan that prints anything, in code order
    moment: datetime  # every row's `created_at` (and the orders' `updated_at`)

    @property
    def codes(self) -> dict[str, str]:
        """The new order codes by reservation id."""
        return {order.write.reservation.id: order.code for order in self.orders}


_ORDER_COLUMNS = ("id", "code", "reservation_id", "printer_organization_id", "industrial_organization_id", "batch_id",
                  "status", "created_at", "updated_at", *Recipient.COLUMNS)
_LINE_COLUMNS = ("order_id", "position", "zone_id", "face_index", "quantity", "asset_id", "qualifiers")
_REUSED_COLUMNS = ("reservation_id", "zone_id", "face_index", "batch_id", "created_at")


def write_plans(
    writes: list[PlanWrite],
    *,
    printer_organization_id: str | None,
    status: PrintOrderStatus = PrintOrderStatus.DRAFT,
    batch_id: str | None = None,
) -> WrittenPlans:
    """Write the plans of reservations the caller has locked (and whose draft it discarded): an
    order with its lines for each plan that prints anything, the reused faces (replacing whatever
    an earlier deposit declared: they are always the latest deposit's), and each reservation's
    support mode and deposit status. A handful of statements whatever the number of reservations:
    the rows by `COPY` (`copy_rows`: a large batch's orders, lines and reused faces as multi-row
    INSERTs cost the database more, and Python adapting them row by row)."""
    moment = clock.now()
    at = moment.isoformat()  # written once, not formatted per row
    if writes:
        database.execute_sql(_DELETE_REUSED, ([w.reservation.id for w in writes],))
    printing = [w for w in writes if w.plan.lines]
    codes = allocate_order_codes(len(printing))
    qualifiers: dict[tuple[str, ...], str] = {}  # each distinct set's array literal, made once
    orders, lines, written = [], [], []
    for write, code in zip(printing, codes, strict=True):
        order_id = new_id()
        orders.append((order_id, code, write.reservation.id, printer_organization_id,
                       write.reservation.industrial_organization_id, batch_id, str(status), at, at,
                       *write.recipient.values()))
        for line in write.plan.lines:
            literal = qualifiers.get(line.qualifiers)
            if literal is None:
                literal = qualifiers[line.qualifiers] = array_literal(line.qualifiers)
            lines.append((order_id, line.position, line.zone_id, line.face_index, line.quantity, line.asset_id,
                          literal))
        written.append(WrittenOrder(order_id, code, write))
    copy_rows("print_order", _ORDER_COLUMNS, orders)
    copy_rows("print_order_line", _LINE_COLUMNS, lines)
    copy_rows("print_reused_face", _REUSED_COLUMNS, [
        (w.reservation.id, slot.zone_id, slot.face_index, batch_id, at) for w in writes for slot in w.plan.reused
    ])
    groups: dict[tuple[str, str], list[str]] = {}
    for write in writes:
        impression = impression_for(status) if write.plan.lines else ImpressionStatus.IN_STOCK
        groups.setdefault((impression, write.plan.support_mode.value), []).append(write.reservation.id)
    for (impression, mode), ids in groups.items():
        database.execute_sql(_UPDATE_RESERVATIONS, (str(impression), mode, moment, ids))
    return WrittenPlans(written, moment)


# The ids as one array value: built by peewee as an `IN` with a placeholder per id, these two
# statements were a large part of a large confirmation's Python time (`peewee.Query.sql`).
_DELETE_REUSED = "DELETE FROM print_reused_face WHERE reservation_id = ANY(%s)"
_UPDATE_RESERVATIONS = ("UPDATE reservation SET impression_status = %s, print_support_mode = %s, updated_at = %s"
                        " WHERE id = ANY(%s)")
