"""The confirmation of a print batch (spec B): one `pending` order per retained reservation that
prints anything, a `LOT-` code, status `sent`; no order at all: the batch is deleted and no code
is drawn.

The confirmation runs in one transaction with the batch row locked, then the selection's
reservations locked sorted by id, so a double click or a retry finds the batch `sent` and
answers its orders again instead of making a second set. It records on the batch the version of
the furniture type the orders were made from, and the summary it answered, so a replay answers
the same bytes. The batch it answers is built from what it wrote, not read back.
"""

from __future__ import annotations

from backend import clock
from backend.db import database, transaction
from backend.printing import preflights
from backend.printing.batch_preview import BatchDeposit, Outcome, load_batch, plan_batch, summarize
from backend.printing.batch_selection import Selected, classify
from backend.printing.batch_state import SENT, BatchState
from backend.printing.configuration import Configuration, printer_for
from backend.printing.models import PrintOrder, PrintOrderBatch
from backend.printing.order_views import ItemLine, ItemOrder, batch_items_of
from backend.printing.plans import PlanWrite, WrittenPlans, write_plans
from backend.printing.status import PrintOrderStatus

CODE_PREFIX = "LOT-"


def allocate_batch_code() -> str:
    number = database.execute_sql("SELECT nextval('print_batch_code_seq')").fetchone()[0]
    return f"{CODE_PREFIX}{number:04d}"


def confirm_batch(*, batch_id: str, organization_id: str, deposit: BatchDeposit,
                  default_printer_organization_id: str | None) -> Outcome:
    """Confirm in one transaction. A batch already sent answers its first confirmation again
    (`replayed`, whatever the body now says): never a second set of orders."""
    with transaction():
        loaded = load_batch(organization_id=organization_id, batch_id=batch_id, lock=True)
        batch, configuration = loaded.batch, loaded.configuration
        if batch.status == SENT:
            codes = dict(PrintOrder.select(PrintOrder.reservation_id, PrintOrder.code)
                         .where(PrintOrder.batch_id == batch.id).tuples())
            return Outcome(batch, batch.confirmation, order_codes=codes, replayed=True)
        classification = classify(batch, deposit.reservation_ids, deposit.delivery, lock=True)
        retained = classification.retained
        plan = plan_batch(loaded, deposit, classification)
        summary = summarize(batch.id, deposit, classification, plan)
        printer = printer_for(configuration, default_printer_organization_id) if plan.with_lines else None
        recipient_of = classification.recipient_of
        writes = [PlanWrite(r, p, recipient_of(r)) for r, p in zip(retained, plan.reservations, strict=True)]
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
