"""The batch status advance: groups of 10 through the single-order service, each group settled
before the next, none after a group with a failure, disjoint counters equal to what was written,
a broken order failing alone, redelivered or second messages that only continue the run, the
hand-over past a message's budget, and the route's wait or 202."""

from __future__ import annotations

import falcon.testing
import pytest

from backend.db import database
from backend.outbox import OutboxMessage
from backend.printing import batch_advance
from backend.printing.models import PrintBatchStatusRun, PrintBatchStatusRunItem, PrintOrder, PrintOrderStatusChange
from schemas.printing.batches import StatusRunOut
from tests.factories import make_organization, signed_in

ADVANCE = batch_advance.ADVANCE_ACTOR


def advance_messages() -> list[OutboxMessage]:
    return list(OutboxMessage.select().where(OutboxMessage.actor_name == ADVANCE).order_by(OutboxMessage.id))


def drain(**options) -> list[tuple]:
    """Run the advance messages the outbox holds, in order, until none is left; the args run."""
    done, ran = set(), []
    while True:
        rows = [row for row in advance_messages() if row.id not in done]
        if not rows:
            return ran
        for row in rows:
            done.add(row.id)
            batch_advance.advance_run(*row.args, **options)
            ran.append(tuple(row.args))


def start(setting, code: str, next_status: str = "sent"):
    return batch_advance.start_advance(batch_code=code, printer_organization_id=setting.printer.id,
                                       next_status=next_status, actor_user_id=setting.printer_user.id, group_size=10)


def batch_orders(code: str) -> list[PrintOrder]:
    from backend.printing.models import PrintOrderBatch

    batch = PrintOrderBatch.get(PrintOrderBatch.code == code)
    return list(PrintOrder.select().where(PrintOrder.batch_id == batch.id).order_by(PrintOrder.code))


def state_of(setting, code: str, run) -> batch_advance.RunState:
    return batch_advance.run_state(batch_code=code, printer_organization_id=setting.printer.id, run_id=run.id)


def test_every_order_advances_group_after_group(setting, sent_batch):
    code = sent_batch(25)
    run = start(setting, code)
    assert run.groups_total == 3 and [m.args for m in advance_messages()] == [[run.id]]  # one message per run
    assert drain() == [(run.id,)]
    state = state_of(setting, code, run)
    assert (state.status, state.advanced, state.skipped, state.failed) == ("done", 25, 0, 0)
    assert {o.status for o in batch_orders(code)} == {"sent"}
    groups = dict(PrintBatchStatusRunItem.select(PrintBatchStatusRunItem.order_id, PrintBatchStatusRunItem.group_index)
                  .where(PrintBatchStatusRunItem.run_id == run.id).tuples())
    assert [groups[o.id] for o in batch_orders(code)] == [0] * 10 + [1] * 10 + [2] * 5  # groups in code order
    changed = [c.order_id for c in PrintOrderStatusChange.select().order_by(PrintOrderStatusChange.id)]
    assert [groups[order_id] for order_id in changed] == sorted(groups[order_id] for order_id in changed)


def test_a_mixed_batch_counts_skips_and_never_fails_globally(setting, sent_batch):
    from backend.printing.orders import cancel_order
    from tests.factories import make_admin

    code = sent_batch(6)
    orders = batch_orders(code)
    cancel_order(order_code=orders[0].code, reason="doublon", actor_user_id=make_admin().id)
    PrintOrder.update(status="in_production").where(PrintOrder.id == orders[1].id).execute()
    run = start(setting, code)
    drain()
    state = state_of(setting, code, run)
    assert (state.advanced, state.skipped, state.failed) == (4, 2, 0)
    assert [o.status for o in batch_orders(code)] == ["cancelled", "in_production", "sent", "sent", "sent", "sent"]


def test_a_failure_in_group_3_stops_the_run_after_that_group(setting, sent_batch):
    code = sent_batch(35)
    orders = batch_orders(code)
    other = make_organization("printer")
    PrintOrder.update(printer_organization_id=other.id).where(PrintOrder.id == orders[24].id).execute()
    run = start(setting, code)
    drain()
    state = state_of(setting, code, run)
    statuses = [o.status for o in batch_orders(code)]
    assert (state.status, state.advanced, state.skipped, state.failed) == ("done", 29, 0, 1)
    assert statuses[:30].count("sent") == 29 and statuses[30:] == ["pending"] * 5  # group 4 never started
    changed = PrintOrderStatusChange.select().where(PrintOrderStatusChange.to_status == "sent").count()
    assert changed == state.advanced  # the counters are exactly what was written
    assert [(o.code, o.error_code) for o in state.failed_orders] == [(orders[24].code, "NOT_FOUND")]


@pytest.mark.owner  # the fault is a trigger
def test_an_order_that_breaks_fails_alone_and_its_group_still_advances(setting, sent_batch):
    """A raw database error on one order (a trigger refusing its change row) breaks the group's
    write together: the group is written again order by order, the broken one `failed`
    (INTERNAL_ERROR), its siblings advanced, and the run stops after that group."""
    code = sent_batch(15)
    orders = batch_orders(code)
    database.execute_sql(f"""
        CREATE FUNCTION refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'refused'; END $$;
        CREATE TRIGGER refuse_change BEFORE INSERT ON print_order_status_change FOR EACH ROW
        WHEN (NEW.order_id = '{orders[3].id}') EXECUTE FUNCTION refuse_change();
    """)  # the test's transaction rolls the trigger back with everything else
    run = start(setting, code)
    drain()
    state = state_of(setting, code, run)
    assert (state.status, state.advanced, state.skipped, state.failed) == ("done", 9, 0, 1)
    assert [(o.code, o.error_code) for o in state.failed_orders] == [(orders[3].code, "INTERNAL_ERROR")]
    assert [o.status for o in batch_orders(code)] == ["sent"] * 3 + ["pending"] + ["sent"] * 6 + ["pending"] * 5


def test_a_group_costs_the_same_statements_whatever_its_size(setting, sent_batch):
    """No statement per order: a run of one group of 12 and a run of four groups of 3 over the same
    orders run the same statements per group (the items' multi-row UPDATE aside, on a cursor): the
    run row locked, the group's items, the reservations then the orders locked, their writes in
    one statement, the run row written, the commit."""
    from tests.support import sql_statements

    code = sent_batch(12)
    per_group = []
    for next_status, size in (("sent", 12), ("in_production", 3)):
        run = batch_advance.start_advance(batch_code=code, printer_organization_id=setting.printer.id,
                                          next_status=next_status, actor_user_id=setting.printer_user.id,
                                          group_size=size)
        with sql_statements() as seen:
            groups = batch_advance.advance_run(run.id)
        assert state_of(setting, code, run).advanced == 12
        per_group.append((len(seen) - 2) / groups)  # per message: the batch's printer; per run: the final counters
    assert per_group[0] == per_group[1] <= 9


def test_a_redelivered_message_never_advances_an_order_twice(setting, sent_batch):
    code = sent_batch(3)
    run = start(setting, code)
    (message,) = advance_messages()
    assert batch_advance.advance_run(*message.args) == 1
    assert batch_advance.advance_run(*message.args) == 0  # the run is done: nothing to do
    for order in batch_orders(code):
        assert PrintOrderStatusChange.select().where(PrintOrderStatusChange.order == order.id).count() == 1
    assert PrintBatchStatusRun.get_by_id(run.id).advanced == 3


def test_past_its_budget_a_message_hands_the_run_over_and_a_second_message_only_continues_it(setting, sent_batch):
    """Each group commits before the next; a message past its budget hands the rest of the run to
    a new message written with its last group; two messages of one run settle each group once."""
    code = sent_batch(32)
    run = start(setting, code)
    (first,) = advance_messages()
    assert batch_advance.advance_run(*first.args, budget_seconds=0) == 1  # one group, then the hand-over
    stored = PrintBatchStatusRun.get_by_id(run.id)
    assert (stored.status, stored.current_group) == ("running", 1)
    handed = advance_messages()
    assert [m.args for m in handed] == [[run.id], [run.id]]
    state = state_of(setting, code, run)  # a running run counts live
    assert (state.status, state.advanced, state.current_group) == ("running", 10, 1)
    assert batch_advance.advance_run(*first.args, budget_seconds=0) == 1  # a redelivery continues: group 1
    assert PrintBatchStatusRun.get_by_id(run.id).current_group == 2
    drain()
    state = state_of(setting, code, run)
    assert (state.status, state.advanced, state.skipped, state.failed) == ("done", 32, 0, 0)
    stored = PrintBatchStatusRun.get_by_id(run.id)
    assert (stored.advanced, stored.skipped, stored.failed) == (32, 0, 0)
    assert PrintOrderStatusChange.select().count() == 32  # each order once


def test_a_message_of_the_former_per_order_advance_continues_its_run(setting, sent_batch):
    from actors.printing import advance_batch_order

    code = sent_batch(12)
    run = start(setting, code)
    advance_batch_order.fn(run.id, batch_orders(code)[0].id)
    assert state_of(setting, code, run).advanced == 12


def test_an_unknown_next_status_or_batch_is_refused(setting, sent_batch, client, printer):
    code = sent_batch(1)
    resp = client.simulate_patch(f"/api/printer/print-batches/{code}/status", headers=printer,
                                 json={"nextStatus": "shipped"})
    assert resp.status_code == 400 and PrintBatchStatusRun.select().count() == 0
    resp = client.simulate_patch("/api/printer/print-batches/LOT-9999/status", headers=printer,
                                 json={"nextStatus": "sent"})
    assert resp.status_code == 404


def test_past_the_wait_the_route_answers_202_and_the_run_reads_back(make_app, setting, sent_batch, printer):
    code = sent_batch(3)
    client = falcon.testing.TestClient(make_app(batch_advance_wait_seconds=0))
    resp = client.simulate_patch(f"/api/printer/print-batches/{code}/status", headers=printer,
                                 json={"nextStatus": "sent"})
    assert resp.status_code == 202 and resp.json["data"]["status"] == "running"
    run_path = f"/api/printer/print-batches/{code}/status-runs/{resp.json['data']['runId']}"
    drain()
    data = client.simulate_get(run_path, headers=printer).json["data"]
    assert StatusRunOut().validate(data) == {}
    assert (data["status"], data["advanced"], data["skipped"], data["failed"]) == ("done", 3, 0, 0)


@pytest.mark.committed
def test_the_route_waits_for_a_real_worker_and_answers_the_counters(request, worker):
    with database.connection_context():
        setting = request.getfixturevalue("setting")
        code = request.getfixturevalue("sent_batch")(12)
        printer = signed_in(setting.printer_user, setting.printer)
        client = request.getfixturevalue("client")
        resp = client.simulate_patch(f"/api/printer/print-batches/{code}/status", headers=printer,
                                     json={"nextStatus": "sent"})
        assert resp.status_code == 200, resp.json
        data = resp.json["data"]
        assert {k: data[k] for k in ("advanced", "skipped", "failed")} == {"advanced": 12, "skipped": 0, "failed": 0}
        assert (data["skippedOrders"], data["failedOrders"]) == ([], []) and data["runId"]
        assert {o.status for o in batch_orders(code)} == {"sent"}


@pytest.mark.committed
def test_the_last_group_tells_the_waiting_requests_with_its_commit(request):
    """`wait_for_run` listens on `RUN_DONE`: the run's last group notifies it (its run id), once,
    with its commit; the earlier groups do not."""
    import os
    import select

    import psycopg2

    listener = psycopg2.connect(os.environ["DATABASE_URL"])
    listener.autocommit = True
    try:
        listener.cursor().execute(f"LISTEN {batch_advance.RUN_DONE}")
        with database.connection_context():
            setting = request.getfixturevalue("setting")
            code = request.getfixturevalue("sent_batch")(7)
            run = batch_advance.start_advance(batch_code=code, printer_organization_id=setting.printer.id,
                                              next_status="sent", actor_user_id=setting.printer_user.id, group_size=3)
            assert batch_advance.advance_run(run.id) == 3
            # delivered after the commits: wait (5 s at most) for one, then a statement of the
            # listener's own collects any other queued for it
            assert select.select([listener], [], [], 5)[0]
            listener.cursor().execute("SELECT 1")
            assert [(n.channel, n.payload) for n in listener.notifies] == [(batch_advance.RUN_DONE, run.id)]
            assert batch_advance.wait_for_run(run.id, timeout_seconds=0).done
    finally:
        listener.close()
