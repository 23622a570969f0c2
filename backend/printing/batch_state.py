"""A print batch as the batch answers show it (spec B resource), and its statuses.

The stored status is `draft` or `sent`; what readers see is `derived_status`, computed from the
orders. A batch's configuration is its furniture type as it is now (`current_configuration`),
whatever version its reservations were sold with: the orders take the type's printer and face
quantities when they are created (spec B, API.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from backend.errors import Conflict, NotFound
from backend.printing import preflights
from backend.printing.configuration import Configuration, current_configuration
from backend.printing.models import PrintOrderBatch, PrintPreflight
from backend.printing.order_views import batch_order_items
from backend.printing.status import PrintOrderStatus

DRAFT, SENT = "draft", "sent"
MIXED = "mixed"  # the derived status of a batch whose live orders differ


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
    """The organization's batch, draft or sent (row-locked with `lock`); NotFound otherwise,
    another organization's batch included."""
    query = PrintOrderBatch.select().where(PrintOrderBatch.id == batch_id,
                                           PrintOrderBatch.organization_id == organization_id)
    batch = (query.for_update() if lock else query).first()
    if batch is None:
        raise NotFound("print batch not found")
    return batch


def require_draft(batch: PrintOrderBatch) -> PrintOrderBatch:
    """`batch`, still a draft; a confirmed one is a conflict (`batch_sent`) for what only a draft
    takes (a preflight, a preview)."""
    if batch.status != DRAFT:
        raise Conflict("the batch is already confirmed", reason="batch_sent", code=batch.code)
    return batch
