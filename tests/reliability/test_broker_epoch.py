"""The broker's epoch marker (`backend.broker_epoch`) on the session's Redis: each verdict, what is
handed over again for it, the log line and the `/api/metrics` counter. The drills with real
restarts are in test_redis_loss_drills.py."""

from __future__ import annotations

import json

import falcon.testing
import pytest

from backend import broker_epoch, observability, outbox
from backend.broker_epoch import EpochWatch, Loss, RedisState, verdict
from backend.db import database, transaction


@pytest.mark.parametrize(("known", "state", "expected"), [
    (None, RedisState(None, None, "r1", True), "first"),
    ("t1", RedisState(None, None, "r1", True), "marker_missing"),
    ("t1", RedisState("t2", "r1", "r1", True), "other_epoch"),
    ("t1", RedisState("t1", "r1", "r1", False), "intact"),
    ("t1", RedisState("t1", "r0", "r1", True), "restarted"),
    ("t1", RedisState("t1", "r0", "r1", False), "restarted_from_snapshot"),
])
def test_the_verdicts(known, state, expected):
    assert verdict(known, state) == expected


@pytest.fixture
def watch(broker):
    broker.client.delete(f"{broker.namespace}:vitrine-epoch")
    with database.connection_context():
        yield EpochWatch(broker.client, broker.namespace)


def _queued(broker) -> int:
    return broker.client.hlen(f"{broker.namespace}:default.msgs")


def _handed_over(n: int) -> list[int]:
    with transaction():
        rows = [outbox.enqueue("noop", f"epoch-{i}") for i in range(n)]
    assert outbox.flush()
    return [row.id for row in rows]


def _marker(broker) -> dict:
    return json.loads(broker.client.get(f"{broker.namespace}:vitrine-epoch"))


@pytest.mark.committed
def test_a_flushed_redis_gets_its_work_again_once_and_a_healthy_one_nothing(watch, broker, log_lines, make_app):
    assert watch.check() is None  # the first check writes the marker
    _handed_over(5)
    assert _queued(broker) == 5
    assert watch.check() is None and _queued(broker) == 5  # queued in a healthy Redis: not re-sent
    broker.client.flushall()
    assert watch.check() == Loss("marker_missing", redelivered=5, unsent=0)
    assert _queued(broker) == 5  # handed over again at once, not after OUTBOX_REDELIVER_AFTER_SECONDS
    assert watch.check() is None and _queued(broker) == 5  # the marker is back: once
    (line,) = [line for line in log_lines() if line["scope"] == "outbox.redis_data_lost"]
    assert (line["level"], line["reason"], line["redelivered"], line["unsentResent"]) == ("error", "marker_missing",
                                                                                          5, 0)
    assert observability.figures()["redis_data_lost"] == broker_epoch.losses() == 1
    metrics = falcon.testing.TestClient(make_app(metrics_token="epoch-metrics-token-0123456789"))
    text = metrics.simulate_get("/api/metrics", headers={"Authorization": "Bearer epoch-metrics-token-0123456789"}).text
    assert "vitrine_outbox_redis_data_lost_total 1.0" in text.splitlines()


@pytest.mark.committed
def test_another_process_finds_the_marker_its_neighbour_wrote_again(watch, broker):
    assert watch.check() is None
    _handed_over(3)
    broker.client.flushall()
    neighbour = EpochWatch(broker.client, broker.namespace)
    assert neighbour.check() == Loss("marker_missing", redelivered=3, unsent=0)
    assert watch.check() is None and _queued(broker) == 3  # this process re-sends nothing more


@pytest.mark.committed
def test_another_epochs_marker_is_a_loss(watch, broker):
    assert watch.check() is None
    _handed_over(2)
    broker.client.set(f"{broker.namespace}:vitrine-epoch", json.dumps({"token": "elsewhere", "runId": "x"}))
    assert watch.check() == Loss("other_epoch", redelivered=2, unsent=0)


@pytest.mark.committed
def test_a_restart_that_reloaded_the_data_re_sends_nothing_but_failed_hand_overs(watch, broker):
    assert watch.check() is None
    _handed_over(4)
    with transaction():
        failed = outbox.enqueue("noop", "failed-while-away")
    assert outbox.flush()
    database.execute_sql("UPDATE outbox_message SET sent_at = NULL, attempts = 1, last_error = 'Redis away'"
                         " WHERE id = %s", (failed.id,))
    marker = _marker(broker)
    broker.client.set(f"{broker.namespace}:vitrine-epoch", json.dumps({**marker, "runId": "before-the-restart"}))
    assert watch.check() is None  # the append-only file brought the queues back
    assert _marker(broker) == marker  # written again with the new run id, same epoch
    assert broker_epoch.losses() == 0
    assert outbox.backlog()["unsent"] == 0  # the hand-over that failed while it was away went at once


@pytest.mark.committed
def test_a_restart_from_snapshots_only_is_a_loss(watch, broker):
    assert watch.check() is None
    _handed_over(2)
    marker = _marker(broker)
    broker.client.set(f"{broker.namespace}:vitrine-epoch", json.dumps({**marker, "runId": "before-the-restart"}))
    broker.client.config_set("appendonly", "no")
    try:
        assert watch.check() == Loss("restarted_from_snapshot", redelivered=2, unsent=0)
    finally:
        broker.client.config_set("appendonly", "yes")
