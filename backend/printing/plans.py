"""Persisting a reservation's deposit plan: its print order and lines, its reused faces, its
support mode and deposit status. The single deposit writes one plan, a batch confirmation one per
retained reservation; both go through `write_plans`, so the rows are the same whichever path made
them.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend import clock
from backend.marketplace.models import Reservation, Store
from backend.model import new_id
from backend.printing.allocation import ReservationPlan
from backend.printing.models import DeliveryTarget, ImpressionStatus, PrintOrder, PrintOrderLine, PrintReusedFace
from backend.printing.orders import allocate_order_codes, impression_for
from backend.printing.status import PrintOrderStatus


@dataclass(frozen=True)
class Recipient:
    """Where an order is shipped, frozen on the order."""

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

    def columns(self) -> dict:
        return {
            "delivery_target": self.target, "recipient_name": self.name, "recipient_street": self.street,
            "recipient_postal_code": self.postal_code, "recipient_city": self.city,
            "recipient_country": self.country,
        }


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


@dataclass(frozen=True)
class PlanWrite:
    """One reservation's plan and where its order goes."""

    reservation: Reservation
    plan: ReservationPlan
    recipient: Recipient


ROWS_PER_INSERT = 1_000


def _insert(model, rows: list[dict]) -> None:
    for start in range(0, len(rows), ROWS_PER_INSERT):
        model.insert_many(rows[start:start + ROWS_PER_INSERT]).execute()


def write_plans(
    writes: list[PlanWrite],
    *,
    printer_organization_id: str | None,
    status: PrintOrderStatus = PrintOrderStatus.DRAFT,
    batch_id: str | None = None,
) -> dict[str, str]:
    """Write the plans of reservations the caller has locked (and whose draft it discarded): an
    order with its lines for each plan that prints anything, the reused faces (replacing whatever
    an earlier deposit declared: they are always the latest deposit's), and each reservation's
    support mode and deposit status. A handful of statements whatever the number of reservations.
    Returns the new order codes by reservation id."""
    moment = clock.now()
    for start in range(0, len(writes), ROWS_PER_INSERT):
        chunk = [w.reservation.id for w in writes[start:start + ROWS_PER_INSERT]]
        PrintReusedFace.delete().where(PrintReusedFace.reservation_id.in_(chunk)).execute()
    printing = [w for w in writes if w.plan.lines]
    codes = allocate_order_codes(len(printing))
    orders, lines = [], []
    for write, code in zip(printing, codes, strict=True):
        order_id = new_id()
        orders.append({
            "id": order_id, "code": code, "reservation_id": write.reservation.id,
            "printer_organization_id": printer_organization_id,
            "industrial_organization_id": write.reservation.industrial_organization_id, "batch_id": batch_id,
            "status": status, "created_at": moment, "updated_at": moment, **write.recipient.columns(),
        })
        lines += [{"order": order_id, "position": line.position, "zone_id": line.zone_id,
                   "face_index": line.face_index, "quantity": line.quantity, "asset_id": line.asset_id,
                   "qualifiers": list(line.qualifiers)} for line in write.plan.lines]
    _insert(PrintOrder, orders)
    _insert(PrintOrderLine, lines)
    _insert(PrintReusedFace, [
        {"reservation_id": w.reservation.id, "zone_id": slot.zone_id, "face_index": slot.face_index,
         "batch_id": batch_id, "created_at": moment}
        for w in writes for slot in w.plan.reused
    ])
    groups: dict[tuple[str, str], list[str]] = {}
    for write in writes:
        impression = impression_for(status) if write.plan.lines else ImpressionStatus.IN_STOCK
        groups.setdefault((impression, write.plan.support_mode.value), []).append(write.reservation.id)
    for (impression, mode), ids in groups.items():
        Reservation.update(impression_status=impression, print_support_mode=mode, updated_at=moment).where(
            Reservation.id.in_(ids)).execute()
    return {order["reservation_id"]: order["code"] for order in orders}
