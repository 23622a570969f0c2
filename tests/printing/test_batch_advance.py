"""The batch status advance: groups of 10 through the single-order service, each group settled
before the next, none after a group with a failure, disjoint counters equal to what was written,
redelivered messages that change nothing, and the route's wait or 202."""

from __future__ import annotations

import falcon.testing
import pytest

from backend.db import database
from backend.outbox import OutboxMessage
from backend.printing import batch_advance
from backend.printing.models import PrintBatchStatusRun, PrintOrder, PrintOrderStatusChange
from schemas.printing.batches import StatusRunOut
from tests.factories import make_organization, signed_in

ADVANCE = batch_advance.ADVANCE_ACTOR


def drain() -> list[tuple]:
    """Run the advance messages the outbox holds, in order, until none is left; the args run."""
    done, ran = set(), []
    while True:
        rows = [row for row in OutboxMessage.select().where(OutboxMessage.actor_name == ADVANCE)
                .order_by(OutboxMessage.id) if row.id not in done]
        if not rows:
            return ran
        for row in rows:
            done.add(row.id)
            batch_advance.advance_batch_order(*row.args)
            ran.append(tuple(row.args))


def start(setting, code: str, next_status: str = "sent"):
    return batch_advance.start_advance(batch_code=code, printer_organization_id=setting.printer.id,
                                       next_status=next_status, actor_user_id=setting.printer_user.id, group_size=10)


def batch_orders(code: str) -> list[PrintOrder]:
    from backend.printing.models import PrintOrderBatch

    batch = PrintOrderBatch.get(PrintOrderBatch.code == code)
    return list(PrintOrder.select().where(PrintOrder.batch_id == batch.id).order_by(PrintOrder.code))


def test_every_order_advances_group_after_group(setting, sent_batch):
    code = sent_batch(25)
    run = start(setting, code)
    assert run.groups_total == 3 and OutboxMessage.select().where(OutboxMessage.actor_name == ADVANCE).count() == 10
    ran = drain()
    state = batch_advance.run_state(batch_code=code, printer_organization_id=setting.printer.id, run_id=run.id)
    assert (state.status, state.advanced, state.skipped, state.failed) == ("done", 25, 0, 0)
    assert {o.status for o in batch_orders(code)} == {"sent"} and len(ran) == 25
    assert [args[1] for args in ran] == [o.id for o in batch_orders(code)]  # groups in code order


def test_a_mixed_batch_counts_skips_and_never_fails_globally(setting, sent_batch):
    from backend.printing.orders import cancel_order
    from tests.factories import make_admin

    code = sent_batch(6)
    orders = batch_orders(code)
    cancel_order(order_code=orders[0].code, reason="doublon", actor_user_id=make_admin().id)
    PrintOrder.update(status="in_production").where(PrintOrder.id == orders[1].id).execute()
    run = start(setting, code)
    drain()
    state = batch_advance.run_state(batch_code=code, printer_organization_id=setting.printer.id, run_id=run.id)
    assert (state.advanced, state.skipped, state.failed) == (4, 2, 0)


def test_a_failure_in_group_3_stops_the_run_after_that_group(setting, sent_batch):
    code = sent_batch(35)
    orders = batch_orders(code)
    other = make_organization("printer")
    PrintOrder.update(printer_organization_id=other.id).where(PrintOrder.id == orders[24].id).execute()
    run = start(setting, code)
    drain()
    state = batch_advance.run_state(batch_code=code, printer_organization_id=setting.printer.id, run_id=run.id)
    statuses = [o.status for o in batch_orders(code)]
    assert (state.status, state.advanced, state.skipped, state.failed) == ("done", 29, 0, 1)
    assert statuses[:30].count("sent") == 29 and statuses[30:] == ["pending"] * 5  # group 4 never started
    changed = PrintOrderStatusChange.select().where(PrintOrderStatusChange.to_status == "sent").count()
    assert changed == state.advanced  # the counters are exactly what was written


def test_a_redelivered_message_never_advances_an_order_twice(setting, sent_batch):
    code = sent_batch(3)
    run = start(setting, code)
    first = OutboxMessage.select().where(OutboxMessage.actor_name == ADVANCE).order_by(OutboxMessage.id).first()
    assert batch_advance.advance_batch_order(*first.args) is True
    assert batch_advance.advance_batch_order(*first.args) is False
    drain()
    order_id = first.args[1]
    assert PrintOrderStatusChange.select().where(PrintOrderStatusChange.order == order_id).count() == 1
    assert PrintBatchStatusRun.get_by_id(run.id).advanced == 3


def test_a_group_is_settled_once_whatever_order_its_messages_end_in(setting, sent_batch):
    """The orders never touch the run row: the message that completes its group settles it, the
    group's other messages (and redeliveries) find it settled; a running run counts live."""
    code = sent_batch(12)
    run = start(setting, code)
    group = list(OutboxMessage.select().where(OutboxMessage.actor_name == ADVANCE).order_by(OutboxMessage.id.desc()))
    for message in group:  # in reverse order: the group completes with its first message
        assert batch_advance.advance_batch_order(*message.args) is True
    assert PrintBatchStatusRun.get_by_id(run.id).current_group == 1
    following = OutboxMessage.select().where(OutboxMessage.actor_name == ADVANCE).order_by(OutboxMessage.id)
    assert following.count() == 12  # group 1 sent once
    for message in group:  # redeliveries of the settled group change nothing and send nothing
        assert batch_advance.advance_batch_order(*message.args) is False
    assert following.count() == 12
    assert batch_advance.advance_batch_order(*following[10].args) is True
    state = batch_advance.run_state(batch_code=code, printer_organization_id=setting.printer.id, run_id=run.id)
    assert (state.status, state.advanced, state.current_group) == ("running", 11, 1)
    assert batch_advance.advance_batch_order(*following[11].args) is True
    state = batch_advance.run_state(batch_code=code, printer_organization_id=setting.printer.id, run_id=run.id)
    assert (state.status, state.advanced) == ("done", 12)
    stored = PrintBatchStatusRun.get_by_id(run.id)
    assert (stored.advanced, stored.skipped, stored.failed) == (12, 0, 0)


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
