"""Print orders: codes, the printer's status changes, and the metrics of an order's lines.

A printer reaches an order through one query filtered on its own organization and on the
statuses released to printers (a `draft` is not theirs yet): anything else is NOT_FOUND, never
a hint that the order exists. Status changes lock the order row, so two concurrent PATCHes
apply one after the other and the second is judged against the first one's result; each change
is recorded (from, to, actor, time) in the same transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from backend import clock
from backend.db import database, transaction
from backend.errors import NotFound
from backend.printing import status as machine
from backend.printing.models import PrintOrder, PrintOrderStatusChange
from backend.printing.status import PRINTER_VISIBLE, PrintOrderStatus

CODE_PREFIX = "PM-"


def allocate_order_code() -> str:
    """The next `PM-0001` code from the sequence: at least four digits, more when it grows past
    9999; gaps (rolled-back transactions) are acceptable, duplicates impossible."""
    number = database.execute_sql("SELECT nextval('print_order_code_seq')").fetchone()[0]
    return f"{CODE_PREFIX}{number:04d}"


def _printer_order_for_update(order_code: str, printer_organization_id: str) -> PrintOrder:
    order = (
        PrintOrder.select()
        .where(
            PrintOrder.code == order_code,
            PrintOrder.printer_organization_id == printer_organization_id,
            PrintOrder.status.in_(PRINTER_VISIBLE),
        )
        .for_update()
        .first()
    )
    if order is None:
        raise NotFound("print order not found")
    return order


def record_status(order: PrintOrder, to_status: PrintOrderStatus, actor_user_id: str | None) -> None:
    """Write `order`'s new status and the change row; the caller holds the row lock."""
    moment = clock.now()
    PrintOrderStatusChange.create(
        order=order, from_status=order.status, to_status=to_status, actor_user_id=actor_user_id, changed_at=moment
    )
    order.status, order.updated_at = to_status, moment
    order.save(only=[PrintOrder.status, PrintOrder.updated_at])


def _apply(
    order_code: str,
    printer_organization_id: str,
    actor_user_id: str,
    transition: Callable[[str], PrintOrderStatus],
) -> PrintOrder:
    with transaction():
        order = _printer_order_for_update(order_code, printer_organization_id)
        record_status(order, transition(order.status), actor_user_id)
    return order


def change_status(
    *, order_code: str, printer_organization_id: str, next_status: str, actor_user_id: str
) -> PrintOrder:
    """PATCH status: the one legitimate forward step; VALIDATION_ERROR for any other."""
    return _apply(
        order_code, printer_organization_id, actor_user_id, lambda current: machine.next_status(current, next_status)
    )


def rollback_status(*, order_code: str, printer_organization_id: str, actor_user_id: str) -> PrintOrder:
    """PATCH status-rollback: one step back along delivered, produced, in_production, sent, pending."""
    return _apply(order_code, printer_organization_id, actor_user_id, machine.rollback)


class MeasuredLine(Protocol):
    zone_id: str
    quantity: int


@dataclass(frozen=True)
class OrderMetrics:
    files_count: int
    panel_count: int
    total_surface_m2: float


SURFACE_DECIMALS = 3  # 0.001 m2 = 10 cm2, below any printable panel's precision


def order_metrics(lines: Iterable[MeasuredLine], zone_sizes_mm: Mapping[str, tuple[int, int]]) -> OrderMetrics:
    """Spec B order metrics: `filesCount` = number of lines, `panelCount` = sum of quantities,
    `totalSurfaceM2` = each line's zone surface counted quantity times.

    `zone_sizes_mm` maps each line's zone id to its (width, height) in millimetres; surfaces
    are summed exactly in mm2 and rounded once, at the end.
    """
    files = panels = surface_mm2 = 0
    for line in lines:
        width, height = zone_sizes_mm[line.zone_id]
        files += 1
        panels += line.quantity
        surface_mm2 += line.quantity * width * height
    return OrderMetrics(files, panels, round(surface_mm2 / 1_000_000, SURFACE_DECIMALS))
