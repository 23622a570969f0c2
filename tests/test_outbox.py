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
            return outbox.enqueue("record_probe", token).id
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
    def redis_is_down(row):
        raise redis.ConnectionError("Connection refused")

    outbox.set_sender(redis_is_down)
    try:
        row_id = _enqueue_committed("recovered")
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
