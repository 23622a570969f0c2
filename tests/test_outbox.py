"""The outbox through a real Redis broker and a real Dramatiq worker."""

from datetime import timedelta

import dramatiq
import pytest
import redis

from actors.broker import install_outbox_sender
from backend import clock, outbox
from backend.context import bind_request_id, current_request_id, reset_request_id
from backend.db import database, transaction
from backend.logs import get_logger

log = get_logger("tests.probe")


@dramatiq.actor(queue_name="default", max_retries=0, time_limit=10_000, throws=())
def record_probe(token: str) -> None:
    log.info("probe ran", extra={"fields": {"token": token}})
    dramatiq.get_broker().client.rpush(f"probe:{token}", current_request_id() or "-")


def _runs(broker, token: str) -> list[str]:
    return [v.decode() for v in broker.client.lrange(f"probe:{token}", 0, -1)]


def _drain(broker, worker) -> None:
    broker.join("default", timeout=10_000)
    worker.join()


@pytest.fixture
def connection():
    with database.connection_context():
        yield


def _enqueue_committed(token: str, request_id: str = "req-outbox") -> int:
    bound = bind_request_id(request_id)
    try:
        with transaction():
            row = outbox.enqueue("record_probe", token)
        return row.id  # set when the block wrote it
    finally:
        reset_request_id(bound)


@pytest.mark.committed
def test_committed_work_runs_once_with_the_request_id(broker, worker, connection, log_lines):
    row_id = _enqueue_committed("committed", request_id="req-abc-1")
    _drain(broker, worker)
    assert _runs(broker, "committed") == ["req-abc-1"]
    row = outbox.OutboxMessage.get_by_id(row_id)
    assert row.sent_at is not None and row.attempts == 1
    worker_lines = [line for line in log_lines() if line["scope"] == "tests.probe"]
    assert worker_lines and worker_lines[-1]["requestId"] == "req-abc-1"


@pytest.mark.committed
def test_rolled_back_work_never_runs_and_leaves_no_row(broker, worker, connection):
    with pytest.raises(RuntimeError), transaction():
        outbox.enqueue("record_probe", "rolled-back")
        raise RuntimeError("the change fails after recording its follow-up")
    _drain(broker, worker)
    assert _runs(broker, "rolled-back") == []
    assert outbox.OutboxMessage.select().count() == 0


@pytest.mark.committed
def test_a_rolled_back_savepoint_drops_only_its_own_work(broker, worker, connection):
    with transaction():
        outbox.enqueue("record_probe", "kept")
        with pytest.raises(ValueError), transaction():
            outbox.enqueue("record_probe", "dropped")
            raise ValueError
    _drain(broker, worker)
    assert _runs(broker, "kept") == ["-"]  # no request bound: the message carries no id
    assert _runs(broker, "dropped") == []
    assert outbox.OutboxMessage.select().count() == 1


@pytest.mark.committed
def test_a_failed_send_is_recovered_by_the_sweeper_once(broker, worker, connection):
    def redis_is_down(rows):
        raise redis.ConnectionError("Connection refused")

    outbox.set_sender(redis_is_down)
    try:
        row_id = _enqueue_committed("recovered")
        assert outbox.flush()
    finally:
        install_outbox_sender(broker)
    row = outbox.OutboxMessage.get_by_id(row_id)
    assert row.sent_at is None and row.attempts == 1 and "refused" in row.last_error
    assert outbox.sweep(older_than_seconds=60) == 0  # too recent: the after-commit send may still come

    with clock.frozen_at(clock.now() + timedelta(seconds=61)):
        assert outbox.sweep(older_than_seconds=60) == 1
        assert outbox.sweep(older_than_seconds=60) == 0
    _drain(broker, worker)
    assert _runs(broker, "recovered") == ["req-outbox"]
    assert outbox.unsent_count() == 0


def test_enqueue_outside_a_transaction_is_refused():
    from backend.db import _levels

    assert _levels()  # the test harness holds a transaction; leave it to check the bare case
    saved = list(_levels())
    _levels().clear()
    try:
        with pytest.raises(RuntimeError, match="inside transaction"):
            outbox.enqueue("record_probe", "x")
    finally:
        _levels().extend(saved)


class _RecordsFollowUp:
    """A route whose service records follow-up work, as every business route will."""

    def on_post(self, req, resp) -> None:
        from api.responses import send

        with transaction():
            row = outbox.enqueue("record_probe", "from-http")
        send(resp, {"outboxId": row.id}, status=201)


def test_work_recorded_during_a_request_carries_its_request_id(app):
    import falcon.testing

    app.add_route("/api/test/follow-up", _RecordsFollowUp())
    resp = falcon.testing.TestClient(app).simulate_post("/api/test/follow-up", headers={"x-request-id": "http-77"})
    assert resp.status_code == 201
    assert outbox.OutboxMessage.get_by_id(resp.json["data"]["outboxId"]).request_id == "http-77"


class _RecordsAndSends:
    """A route that records follow-up work in the outbox and also sends a message directly."""

    def on_post(self, req, resp) -> None:
        from api.responses import send

        with transaction():
            outbox.enqueue("record_probe", "from-outbox")
        record_probe.send("sent-directly")
        send(resp, {}, status=201)


@pytest.mark.committed
def test_the_request_id_reaches_the_workers_log_lines_by_outbox_and_by_direct_send(app, broker, worker, log_lines):
    import falcon.testing

    app.add_route("/api/test/follow-up-sent", _RecordsAndSends())
    resp = falcon.testing.TestClient(app).simulate_post("/api/test/follow-up-sent",
                                                        headers={"x-request-id": "http-e2e-9"})
    assert resp.status_code == 201
    _drain(broker, worker)
    assert _runs(broker, "from-outbox") == ["http-e2e-9"]
    assert _runs(broker, "sent-directly") == ["http-e2e-9"]
    worker_lines = [line["requestId"] for line in log_lines() if line["scope"] == "tests.probe"]
    assert worker_lines == ["http-e2e-9", "http-e2e-9"]


@dramatiq.actor(queue_name="default", max_retries=0, time_limit=10_000, throws=())
def always_fails() -> None:
    raise RuntimeError("a poison message")


def test_dead_letters_are_counted_per_queue(broker, worker):
    from actors.broker import queue_sizes

    always_fails.send()
    _drain(broker, worker)
    sizes = {row["queue"]: row for row in queue_sizes(broker)}
    assert sizes["default"]["dead"] == 1
    assert sizes["default"]["messages"] == 0
    assert set(sizes) >= {"default", "webhooks", "documents", "einvoicing", "printing", "email"}


# End-to-end at least once: a row is closed by the worker, not by Redis taking the message.

class _Refused(Exception):
    pass


@dramatiq.actor(queue_name="default", max_retries=0, time_limit=10_000, throws=(_Refused,))
def refuses_politely() -> None:
    raise _Refused("nothing to do for this one")


def _row(row_id: int) -> outbox.OutboxMessage:
    return outbox.OutboxMessage.get_by_id(row_id)


def _committed(actor_name: str, *args) -> int:
    with transaction():
        row = outbox.enqueue(actor_name, *args)
    return row.id


@pytest.mark.committed
def test_a_row_is_closed_when_its_actor_has_done_the_work(broker, worker, connection):
    done, refused = _committed("record_probe", "closed"), _committed("refuses_politely")
    dead = _committed("always_fails")
    _drain(broker, worker)
    assert _runs(broker, "closed") == ["-"]
    assert _row(done).done_at is not None and _row(done).dead_at is None
    assert _row(refused).done_at is not None  # a declared refusal is the actor's answer
    assert _row(dead).dead_at is not None and _row(dead).done_at is None and "poison" in _row(dead).last_error
    assert outbox.backlog() == {"unsent": 0, "notDone": 0, "oldestNotDoneSeconds": 0.0, "dead": 1}
    with clock.frozen_at(clock.now() + timedelta(days=2)):
        assert outbox.sweep() == 0  # neither done nor dead rows are ever sent again


@pytest.mark.committed
def test_work_lost_by_redis_after_the_hand_over_is_sent_again_and_done_once(broker, connection):
    from dramatiq import Worker

    row_id = _committed("record_probe", "lost")  # no worker yet: handed over, not done
    assert outbox.flush()
    assert _row(row_id).sent_at is not None
    broker.flush_all()  # the message is gone (it died with a worker); Redis kept its data and epoch marker
    assert outbox.backlog()["notDone"] == 1
    assert outbox.sweep() == 0  # too early: the message may still be on its way
    with clock.frozen_at(clock.now() + timedelta(seconds=601)):
        assert outbox.sweep() == 1
    worker = Worker(broker, worker_timeout=100, worker_threads=1)
    worker.start()
    try:
        _drain(broker, worker)
    finally:
        worker.stop()
    assert _runs(broker, "lost") == ["-"]
    row = _row(row_id)
    assert row.done_at is not None and row.attempts == 2
    assert outbox.backlog()["notDone"] == 0


@pytest.mark.committed
def test_each_hand_over_waits_twice_as_long_then_the_row_is_dead(broker, connection):
    outbox.set_redelivery(outbox.Redelivery(after_seconds=10, max_handovers=3))
    try:
        row_id = _committed("record_probe", "never-done")
        assert outbox.flush()
        first = _row(row_id)
        assert (first.redeliver_at - first.sent_at).total_seconds() == 10
        with clock.frozen_at(first.sent_at + timedelta(seconds=11)):
            assert outbox.sweep() == 1
            second = _row(row_id)
            assert (second.redeliver_at - second.sent_at).total_seconds() == 20
        with clock.frozen_at(second.sent_at + timedelta(seconds=21)):
            assert outbox.sweep() == 1
        with clock.frozen_at(second.sent_at + timedelta(days=1)):
            assert outbox.sweep() == 0
        row = _row(row_id)
        assert row.attempts == 3 and row.dead_at is not None and "3 hand-overs" in row.last_error
        assert outbox.backlog()["dead"] == 1
    finally:
        outbox.set_redelivery(outbox.Redelivery())


class _Stalled:
    """A sender stuck on a frozen Redis until released."""

    def __init__(self) -> None:
        import threading

        self.release = threading.Event()
        self.rows: list[int] = []

    def __call__(self, rows) -> list[None]:
        assert self.release.wait(10)
        self.rows.extend(row.id for row in rows)
        return [None] * len(rows)


@pytest.mark.committed
def test_a_stalled_redis_never_holds_the_request_that_committed(app, broker, connection):
    import falcon.testing

    stalled = _Stalled()
    outbox.set_sender(stalled)
    try:
        app.add_route("/api/test/follow-up", _RecordsFollowUp())
        resp = falcon.testing.TestClient(app).simulate_post("/api/test/follow-up")
        assert resp.status_code == 201  # answered while the hand-over is still stuck
        row_id = resp.json["data"]["outboxId"]
        assert stalled.rows == [] and _row(row_id).sent_at is None
        stalled.release.set()
        assert outbox.flush()
        assert stalled.rows == [row_id] and _row(row_id).sent_at is not None
    finally:
        stalled.release.set()
        install_outbox_sender(broker)


def test_enqueue_inserts_the_row_at_once_in_the_callers_transaction_and_a_failed_savepoint_drops_its_own():
    probes = outbox.OutboxMessage.actor_name == "record_probe"
    with transaction():
        seen = outbox.enqueue("record_probe", "seen")
        assert seen.id is not None
        assert [row.args for row in outbox.OutboxMessage.select().where(probes)] == [["seen"]]
        try:
            with transaction():
                outbox.enqueue("record_probe", "dropped")
                raise RuntimeError("the savepoint fails")
        except RuntimeError:
            pass
        after = outbox.enqueue("record_probe", "after")
    assert sorted(row.args[0] for row in outbox.OutboxMessage.select().where(probes)) == ["after", "seen"]
    assert seen.id < after.id


def test_arguments_json_cannot_hold_are_refused_at_the_call():
    with transaction(), pytest.raises(TypeError):
        outbox.enqueue("record_probe", object())


@pytest.mark.committed
def test_a_hand_over_marks_a_whole_block_sent_in_one_statement_and_each_row_runs_once(broker, worker, connection):
    from tests.support import sql_statements

    with sql_statements() as statements:
        with transaction():
            rows = [outbox.enqueue("record_probe", f"many-{n}") for n in range(40)]
        assert outbox.flush()
        marks = [statement for statement in statements if "SET sent_at" in statement]
    assert 1 <= len(marks) <= len(rows)  # the hand-over thread takes what waits, in one statement a batch
    _drain(broker, worker)
    assert all(_runs(broker, f"many-{n}") == ["-"] for n in range(40))
    assert all(_row(row.id).sent_at is not None and _row(row.id).attempts == 1 for row in rows)
    assert all(_row(row.id).done_at is not None for row in rows)


@pytest.mark.committed
def test_a_row_the_broker_refuses_fails_alone_and_its_neighbours_are_sent(broker, worker, connection):
    with transaction():
        before = outbox.enqueue("record_probe", "beside-1")
        unknown = outbox.enqueue("no_such_actor", 1)
        after = outbox.enqueue("record_probe", "beside-2")
    assert outbox.flush()
    _drain(broker, worker)
    assert _runs(broker, "beside-1") == ["-"] and _runs(broker, "beside-2") == ["-"]
    assert _row(before.id).sent_at is not None and _row(after.id).sent_at is not None
    refused = _row(unknown.id)
    assert refused.sent_at is None and refused.attempts == 1 and "no_such_actor" in refused.last_error
    assert outbox.unsent_count() == 1  # left to the sweeper, which tries again (and logs) each minute
