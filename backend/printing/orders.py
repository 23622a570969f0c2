"""Print orders: codes, status changes (printer steps, admin release and cancellation), and the
metrics of an order's lines.

A printer reaches an order through one query filtered on its own organization and on the
statuses released to printers (a `draft` is not theirs yet): anything else is NOT_FOUND, never
a hint that the order exists. Status changes lock the reservation row then the order row (the one
lock order of printing, `lock_order`), so two concurrent PATCHes apply one after the other and the
second is judged against the first one's result; each change
is recorded (from, to, actor, time) in the same transaction, and moves the deposit status of the
order's reservation with it (`impression_for`): `record_status` is the only writer of both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from backend import clock
from backend.audit import record_security_event
from backend.db import database, transaction
from backend.errors import DomainError, NotFound, ValidationError
from backend.marketplace.models import Reservation
from backend.printing import status as machine
from backend.printing.models import ImpressionStatus, PrintOrder, PrintReusedFace
from backend.printing.status import PRINTER_VISIBLE, PrintOrderStatus

CODE_PREFIX = "PM-"
CANCEL_REASON_MAX_LENGTH = 2000

# The deposit status a reservation shows while its active order is in each status: the deposit
# is reviewed while the order is a draft, validated once released to the printer, locked once the
# printer has taken it; a cancelled order gives the deposit back to the industrial.
_IMPRESSION_BY_ORDER_STATUS = {
    PrintOrderStatus.DRAFT: ImpressionStatus.IN_REVIEW,
    PrintOrderStatus.PENDING: ImpressionStatus.VALIDATED,
    PrintOrderStatus.SENT: ImpressionStatus.LOCKED,
    PrintOrderStatus.IN_PRODUCTION: ImpressionStatus.LOCKED,
    PrintOrderStatus.PRODUCED: ImpressionStatus.LOCKED,
    PrintOrderStatus.DELIVERED: ImpressionStatus.LOCKED,
    PrintOrderStatus.CANCELLED: ImpressionStatus.TO_DEPOSIT,
}


def impression_for(order_status: str) -> ImpressionStatus:
    return _IMPRESSION_BY_ORDER_STATUS[PrintOrderStatus(order_status)]


def allocate_order_codes(count: int) -> list[str]:
    """`count` codes from the sequence in one statement, in increasing order: `PM-0001`, at least
    four digits, more when it grows past 9999; gaps (rolled-back transactions) are acceptable,
    duplicates impossible."""
    if count == 0:
        return []
    rows = database.execute_sql(
        "SELECT nextval('print_order_code_seq') AS n FROM generate_series(1, %s) ORDER BY n", (count,)
    ).fetchall()
    return [f"{CODE_PREFIX}{number:04d}" for (number,) in rows]


def lock_order(where: str, params: tuple) -> PrintOrder | None:
    """The order `where` selects, locked in the one lock order of printing: its reservation's row
    first, then the order's (the deposits lock the reservation, then delete or write its orders;
    batch confirmations lock their reservations sorted by id). An order's reservation never
    changes, so reading it unlocked first is safe; the order is read again under the lock."""
    locked = lock_orders(where, params)
    return locked[0] if locked else None


# The one lock order as text, `where` a filter on `print_order o` with `%s` values: a batch advance
# sends it for each group of orders, and building it as a peewee query was most of a group's
# Python time (`peewee.Query.sql` under `lock_orders`).
_LOCK_RESERVATIONS = ("SELECT r.id FROM reservation r WHERE r.id IN (SELECT o.reservation_id FROM print_order o"
                      " WHERE {where}) ORDER BY r.id FOR UPDATE OF r")
_LOCK_ORDERS = "SELECT o.* FROM print_order o WHERE {where} ORDER BY o.id FOR UPDATE"
_BY_CODE = "o.code = %s"
_PRINTER_CODES = "o.code = ANY(%s) AND o.printer_organization_id = %s AND o.status = ANY(%s)"
_PRINTER_VISIBLE = [status.value for status in PRINTER_VISIBLE]


def lock_orders(where: str, params: tuple) -> list[PrintOrder]:
    """The orders `where` selects (a filter on `print_order o`, its `%s` values in `params`), locked
    in the one lock order of printing: every reservation first, sorted by id, then every order,
    sorted by id. Two statements whatever the number of orders, sent in one round trip (the
    second's rows are the answer: an order without its reservation does not exist)."""
    statements = f"{_LOCK_RESERVATIONS}; {_LOCK_ORDERS}".format(where=where)
    return list(PrintOrder.raw(statements, *params, *params))


def _printer_orders(order_codes: list[str], printer_organization_id: str) -> tuple[str, tuple]:
    """The printer's orders of these codes that it may see (a draft is not released to it yet)."""
    return _PRINTER_CODES, (order_codes, printer_organization_id, _PRINTER_VISIBLE)


def printer_order_for_update(order_code: str, printer_organization_id: str) -> PrintOrder:
    order = lock_order(*_printer_orders([order_code], printer_organization_id))
    if order is None:
        raise NotFound("print order not found")
    return order


def record_status(order: PrintOrder, to_status: PrintOrderStatus, actor_user_id: str | None) -> None:
    """Write `order`'s new status, the change row and the reservation's deposit status; the
    caller holds the order's row lock."""
    record_statuses([order], to_status, actor_user_id)


# The orders, their reservations' deposit status and their change rows, in one statement.
RECORD_STATUSES = """
WITH changed AS (
    UPDATE print_order SET status = %(to)s, updated_at = %(at)s{cancel_reason} WHERE id = ANY(%(ids)s)
    RETURNING reservation_id
), deposits AS (
    UPDATE reservation SET impression_status = %(impression)s, updated_at = %(at)s
     WHERE id IN (SELECT reservation_id FROM changed)
)
INSERT INTO print_order_status_change (order_id, from_status, to_status, actor_user_id, changed_at)
SELECT order_id, from_status, %(to)s, %(actor)s, %(at)s
  FROM unnest(%(ids)s::varchar[], %(from)s::varchar[]) WITH ORDINALITY AS change (order_id, from_status, n)
 ORDER BY n
"""


def record_statuses(changed: list[PrintOrder], to_status: PrintOrderStatus, actor_user_id: str | None, *,
                    deferred: list[tuple[str, dict]] | None = None) -> None:
    """`record_status` of orders moving to the same status, in one statement whatever their number
    (the orders, their reservations' deposit status, the change rows); the caller holds their row
    locks. An order's `cancel_reason` is written with its status (a cancellation sets it on the
    one order it cancels). With `deferred`, the statement and its values are appended there
    instead of being sent: the caller sends them, in its transaction, with its own statements."""
    if not changed:
        return
    moment = clock.now()
    params = {"to": str(to_status), "at": moment, "ids": [order.id for order in changed],
              "from": [str(order.status) for order in changed], "actor": actor_user_id,
              "impression": str(impression_for(to_status))}
    reasons = {order.cancel_reason for order in changed}
    if len(reasons) > 1:
        raise ValueError("orders recorded together have one cancel reason")
    params["cancel_reason"] = reasons.pop()
    cancel_reason = "" if params["cancel_reason"] is None else ", cancel_reason = %(cancel_reason)s"
    statement = RECORD_STATUSES.format(cancel_reason=cancel_reason)
    if deferred is None:
        database.execute_sql(statement, params)
    else:
        deferred.append((statement, params))
    for order in changed:
        order.status, order.updated_at = to_status, moment


def _apply(
    order_code: str,
    printer_organization_id: str,
    actor_user_id: str,
    transition: Callable[[str], PrintOrderStatus],
) -> PrintOrder:
    with transaction():
        order = printer_order_for_update(order_code, printer_organization_id)
        record_status(order, transition(order.status), actor_user_id)
    return order


def change_status(
    *, order_code: str, printer_organization_id: str, next_status: str, actor_user_id: str
) -> PrintOrder:
    """PATCH status: the one legitimate forward step; VALIDATION_ERROR for any other."""
    outcome = change_statuses(order_codes=[order_code], printer_organization_id=printer_organization_id,
                              next_status=next_status, actor_user_id=actor_user_id)[order_code]
    if isinstance(outcome, DomainError):
        raise outcome
    return outcome


def change_statuses(
    *, order_codes: list[str], printer_organization_id: str, next_status: str, actor_user_id: str | None
) -> dict[str, PrintOrder | DomainError]:
    """`change_status` of several orders of the printer together, in one transaction: for each
    code, its order as changed, or the refusal the single route answers for it (NOT_FOUND,
    VALIDATION_ERROR), which leaves that order as it was."""
    with transaction():
        return apply_status_changes(order_codes=order_codes, printer_organization_id=printer_organization_id,
                                    next_status=next_status, actor_user_id=actor_user_id)


def apply_status_changes(
    *, order_codes: list[str], printer_organization_id: str, next_status: str, actor_user_id: str | None,
    deferred: list[tuple[str, dict]] | None = None,
) -> dict[str, PrintOrder | DomainError]:
    """`change_statuses` in the caller's transaction (a batch advance group's, which holds its run
    row too): three statements whatever the number of orders (locks, then the writes; the writes
    left to the caller in `deferred` when given, see `record_statuses`)."""
    locked = {order.code: order for order in lock_orders(*_printer_orders(order_codes, printer_organization_id))}
    outcomes: dict[str, PrintOrder | DomainError] = {}
    changed, target = [], None
    for code in dict.fromkeys(order_codes):
        order = locked.get(code)
        if order is None:
            outcomes[code] = NotFound("print order not found")
            continue
        try:
            target = machine.next_status(order.status, next_status)  # one target: the requested status
        except ValidationError as exc:
            outcomes[code] = exc
            continue
        outcomes[code] = order
        changed.append(order)
    if changed:
        record_statuses(changed, target, actor_user_id, deferred=deferred)
    return outcomes


def rollback_status(*, order_code: str, printer_organization_id: str, actor_user_id: str) -> PrintOrder:
    """PATCH status-rollback: one step back along delivered, produced, in_production, sent, pending."""
    return _apply(order_code, printer_organization_id, actor_user_id, machine.rollback)


def _order_for_update(order_code: str) -> PrintOrder:
    order = lock_order(_BY_CODE, (order_code,))
    if order is None:
        raise NotFound("print order not found")
    return order


def release_order(*, order_code: str, actor_user_id: str) -> PrintOrder:
    """Admin: validate a deposit, its draft order goes to the printer (`pending`)."""
    with transaction():
        order = _order_for_update(order_code)
        record_status(order, machine.release(order.status), actor_user_id)
        record_security_event("print_order.released", actor_user_id=actor_user_id, target_type="print_order",
                              target_id=order.code, details={"reservationId": order.reservation_id})
    return order


def cancel_order(*, order_code: str, reason: str, actor_user_id: str) -> PrintOrder:
    """Admin: cancel an order in any status but `delivered`, with a reason (audited). The
    reservation's deposit opens again (`to_deposit`), with nothing declared: its reused faces and
    support mode go with the cancelled deposit."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError("a reason is required", fields={"reason": ["required"]})
    with transaction():
        order = _order_for_update(order_code)
        previous = order.status
        to_status = machine.cancel(order.status)
        order.cancel_reason = reason[:CANCEL_REASON_MAX_LENGTH]
        record_status(order, to_status, actor_user_id)
        PrintReusedFace.delete().where(PrintReusedFace.reservation_id == order.reservation_id).execute()
        Reservation.update(print_support_mode=None).where(Reservation.id == order.reservation_id).execute()
        record_security_event("print_order.cancelled", actor_user_id=actor_user_id, target_type="print_order",
                              target_id=order.code,
                              details={"reason": order.cancel_reason, "previousStatus": previous,
                                       "reservationId": order.reservation_id})
    return order


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
    return metrics_of((line.quantity, *zone_sizes_mm[line.zone_id]) for line in lines)


def metrics_of(lines: Iterable[tuple[int, int, int]]) -> OrderMetrics:
    """`order_metrics` of lines given as (quantity, zone width mm, zone height mm)."""
    files = panels = surface_mm2 = 0
    for quantity, width, height in lines:
        files += 1
        panels += quantity
        surface_mm2 += quantity * width * height
    return OrderMetrics(files, panels, surface_m2(surface_mm2))


def surface_m2(surface_mm2: int) -> float:
    """A surface summed exactly in mm2, in m2 rounded once (`SURFACE_DECIMALS`)."""
    return round(surface_mm2 / 1_000_000, SURFACE_DECIMALS)
