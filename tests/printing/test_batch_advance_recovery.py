"""A batch status advance never stays `running` for good: transient errors are retried, the clock
resumes a run that stopped moving, and a second request answers the running run.
Its answer names the run and, for skipped and failed orders, each order's code and reason."""

from __future__ import annotations

from datetime import timedelta

from actors.printing import advance_batch_run
from backend import clock
from backend.errors import DomainError, ServiceUnavailable
from backend.outbox import OutboxMessage
from backend.printing import batch_advance
from backend.printing.models import PrintBatchStatusRun
from backend.printing.orders import cancel_order
from tests.factories import make_admin
from tests.printing.test_batch_advance import ADVANCE, batch_orders, drain, start


def test_a_transient_error_is_retried_by_the_worker():
    throws = advance_batch_run.options["throws"]
    assert not issubclass(ServiceUnavailable, throws)
    assert advance_batch_run.options["max_retries"] > 0
    assert issubclass(DomainError, Exception)


def test_a_second_advance_request_answers_the_running_run(setting, sent_batch):
    code = sent_batch(3)
    first = start(setting, code)
    second = start(setting, code)
    assert second.id == first.id and PrintBatchStatusRun.select().count() == 1
    assert OutboxMessage.select().where(OutboxMessage.actor_name == ADVANCE).count() == 1
    drain()
    third = start(setting, code, next_status="in_production")  # the first one is done: a new run
    assert third.id != first.id


def test_the_clock_resumes_a_run_that_stopped_moving(setting, sent_batch):
    code = sent_batch(12)
    run = start(setting, code)
    (message,) = OutboxMessage.select().where(OutboxMessage.actor_name == ADVANCE)
    batch_advance.advance_run(*message.args, budget_seconds=0)  # group 0, then its hand-over...
    OutboxMessage.delete().where(OutboxMessage.actor_name == ADVANCE).execute()  # ...whose message died
    assert batch_advance.resume_stalled_runs(older_than_seconds=300) == 0  # not stalled yet
    PrintBatchStatusRun.update(progressed_at=clock.now() - timedelta(minutes=10)).where(
        PrintBatchStatusRun.id == run.id).execute()
    assert batch_advance.resume_stalled_runs(older_than_seconds=300) == 1
    assert batch_advance.resume_stalled_runs(older_than_seconds=300) == 0  # moved: resent once
    assert [m.args for m in OutboxMessage.select().where(OutboxMessage.actor_name == ADVANCE)] == [[run.id]]
    drain()
    state = batch_advance.run_state(batch_code=code, printer_organization_id=setting.printer.id, run_id=run.id)
    assert (state.status, state.advanced) == ("done", 12)


def test_the_answer_names_the_run_and_why_orders_were_skipped(client, setting, sent_batch, printer, make_app):
    import falcon.testing

    code = sent_batch(3)
    orders = batch_orders(code)
    cancel_order(order_code=orders[0].code, reason="doublon", actor_user_id=make_admin().id)
    waiting = falcon.testing.TestClient(make_app(batch_advance_wait_seconds=0))
    resp = waiting.simulate_patch(f"/api/printer/print-batches/{code}/status", headers=printer,
                                  json={"nextStatus": "sent"})
    run_id = resp.json["data"]["runId"]
    drain()
    data = client.simulate_get(f"/api/printer/print-batches/{code}/status-runs/{run_id}", headers=printer).json["data"]
    assert (data["advanced"], data["skipped"], data["failed"]) == (2, 1, 0)
    (skipped,) = data["skippedOrders"]
    assert skipped["code"] == orders[0].code and skipped["errorCode"] == "VALIDATION_ERROR"
    assert "cancelled" in skipped["reason"] and data["failedOrders"] == []
