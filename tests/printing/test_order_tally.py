"""The printers' order tally (migration 164): random sequences of multi-row statements on
`print_order` (inserts, status moves, orders put in and out of a batch, moved to another printer,
deleted), after each of which `print_order_tally` equals the orders counted per printer, status and
scope; the list's totals and the counters read it; the database refuses what would break it.
Deterministic (a fixed seed, `ORDER_TALLY_EXAMPLES` sequences; 15 by default)."""

from __future__ import annotations

import os

import peewee
import psycopg2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backend.db import database, transaction
from backend.printing import order_views
from backend.printing.models import PrintOrder, PrintOrderBatch
from backend.printing.orders import allocate_order_codes
from backend.printing.plans import Recipient
from backend.printing.status import PrintOrderStatus
from tests.factories import make_organization

EXAMPLES = int(os.environ.get("ORDER_TALLY_EXAMPLES", "15"))
STATUSES = [status.value for status in PrintOrderStatus]
_COUNTED = """SELECT printer_organization_id, status, batch_id IS NOT NULL, count(*)
                FROM print_order GROUP BY 1, 2, 3"""
_TALLIED = "SELECT printer_organization_id, status, in_batch, orders FROM print_order_tally WHERE orders > 0"


class _Rollback(Exception):
    pass


def _chosen(ids: list[str], start: int, step: int) -> list[str]:
    return ids[start % len(ids)::step] if ids else []


_STEP = st.one_of(
    st.tuples(st.just("insert"), st.integers(1, 4), st.integers(0, 1), st.sampled_from(STATUSES), st.booleans()),
    st.tuples(st.just("status"), st.integers(0, 9), st.integers(1, 3), st.sampled_from(STATUSES)),
    st.tuples(st.just("batch"), st.integers(0, 9), st.integers(1, 3), st.booleans()),
    st.tuples(st.just("printer"), st.integers(0, 9), st.integers(1, 3), st.integers(0, 1)),
    st.tuples(st.just("delete"), st.integers(0, 9), st.integers(2, 4)),
)


@pytest.fixture
def world(setting):
    printers = [setting.printer.id, make_organization("printer").id]
    batch = PrintOrderBatch.create(organization_id=setting.industrial.id, campaign_id=setting.campaign.id,
                                   promo_furniture_type_id=setting.version.furniture_type_id,
                                   furniture_type_version_id=setting.version.id)
    reservations = [setting.reservation().id for _ in range(40)]
    return setting, printers, batch.id, reservations


def _apply(step: tuple, world, used: list[int]) -> None:
    setting, printers, batch_id, reservations = world
    ids = [i for (i,) in database.execute_sql("SELECT id FROM print_order ORDER BY code")]
    kind = step[0]
    if kind == "insert":
        _, count, printer, status, in_batch = step
        rows = []
        for _ in range(count):
            used[0] += 1
            rows.append({"code": allocate_order_codes(1)[0], "reservation_id": reservations[used[0]],
                         "printer_organization_id": printers[printer], "status": status,
                         "industrial_organization_id": setting.industrial.id,
                         "batch_id": batch_id if in_batch else None, **Recipient.of_store(setting.store).columns()})
        PrintOrder.insert_many(rows).execute()  # one statement, several rows
        return
    chosen = _chosen(ids, step[1], step[2])
    if not chosen:
        return
    if kind == "status":
        PrintOrder.update(status=step[3]).where(PrintOrder.id.in_(chosen)).execute()
    elif kind == "batch":
        PrintOrder.update(batch_id=batch_id if step[3] else None).where(PrintOrder.id.in_(chosen)).execute()
    elif kind == "printer":
        PrintOrder.update(printer_organization_id=printers[step[3]]).where(PrintOrder.id.in_(chosen)).execute()
    else:
        PrintOrder.delete().where(PrintOrder.id.in_(chosen)).execute()


@settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(steps=st.lists(_STEP, min_size=1, max_size=8))
def test_the_tally_is_the_orders_counted_after_every_statement(world, steps):
    _, printers, *_ = world
    used = [-1]  # reservations taken: one each (an active reservation has one order)
    try:
        with transaction():
            for step in steps:
                _apply(step, world, used)
                assert sorted(database.execute_sql(_TALLIED).fetchall()) == sorted(
                    database.execute_sql(_COUNTED).fetchall())
            for printer in printers:
                counted = PrintOrder.select().where(PrintOrder.printer_organization_id == printer,
                                                    PrintOrder.status != "draft")
                _, total = order_views.printer_orders(printer_organization_id=printer, limit=1)
                assert total == counted.count()
                _, isolated = order_views.printer_orders(printer_organization_id=printer, limit=1, scope="isolated",
                                                         statuses=["pending", "sent"])
                assert isolated == counted.where(PrintOrder.batch_id.is_null(),
                                                 PrintOrder.status.in_(["pending", "sent"])).count()
                counters = order_views.printer_counters(printer)
                assert counters["all"]["total"] == counted.count()
                assert counters["isolated"]["total"] == counted.where(PrintOrder.batch_id.is_null()).count()
            raise _Rollback
    except _Rollback:
        pass


def test_a_page_beyond_the_last_answers_the_tallied_total(setting, make_print_order):
    for status in ("pending", "sent", "draft"):
        make_print_order(status)
    assert order_views.printer_orders(printer_organization_id=setting.printer.id, limit=5, offset=10) == ([], 2)
    assert order_views.printer_orders(printer_organization_id=setting.printer.id, statuses=["sent"], limit=5,
                                      offset=1) == ([], 1)


@pytest.mark.committed
def test_the_runtime_role_only_reads_the_tally_and_a_count_never_goes_below_zero(setting, make_print_order):
    order = make_print_order("pending")
    denied = "permission denied for table print_order_tally"  # the runtime role: the trigger writes it
    with pytest.raises(peewee.ProgrammingError, match=denied), database.atomic():
        database.execute_sql("UPDATE print_order_tally SET orders = orders + 1")
    with psycopg2.connect(os.environ["DATABASE_OWNER_URL"]) as owner, owner.cursor() as cursor:
        cursor.execute("DELETE FROM print_order_tally")  # a tally that lost its count (only the owner could)
    with pytest.raises(peewee.DatabaseError, match="print_order_tally: no count for printer"), database.atomic():
        PrintOrder.update(status="sent").where(PrintOrder.id == order.id).execute()
    owner.close()
