"""Processes that heal: a failing periodic job waits for the next tick (never dead-lettered, never
kills the clock), and the messages a killed worker held come back within 30 s."""

import os
import signal
import subprocess
import sys
import time
import uuid

import dramatiq
import pendulum
import redis
from dramatiq import Message
from dramatiq.brokers.redis import RedisBroker
from periodiq import cron

from actors.broker import HEARTBEAT_TIMEOUT_MS, MAINTENANCE_CHANCE
from ops.clock import Clock


def test_a_failing_periodic_job_is_logged_and_not_dead_lettered(broker, worker, log_lines):
    name = f"failing_periodic_{uuid.uuid4().hex[:8]}"

    def fails() -> None:
        raise redis.ConnectionError("Redis went away")

    actor = dramatiq.actor(fails, actor_name=name, queue_name="default", max_retries=0, throws=(),
                           periodic=cron("0 0 1 1 *"))
    try:
        actor.send_with_options(scheduled_at=str(pendulum.now()))
        broker.join("default", timeout=30_000)
        worker.join()
        assert broker.client.hlen(f"{broker.namespace}:default.XQ.msgs") == 0
        failures = [line for line in log_lines() if line["message"].startswith("periodic job failed")]
        assert failures and failures[0]["actor"] == name
        assert "Redis went away" in failures[0]["error"]
    finally:
        broker.actors.pop(name, None)


def test_a_schedule_that_cannot_be_sent_waits_for_the_next_tick(log_lines):
    class Unreachable:
        actor_name = "sweep_outbox"

        def send_with_options(self, **options):
            raise redis.ConnectionError("Error 111 connecting")

    sent = []

    class Reachable:
        actor_name = "reconcile_pending_envelopes"

        def send_with_options(self, **options):
            sent.append(options)

    Clock(actors=[]).send_actors([Unreachable(), Reachable()], now="2026-11-23T10:00:00+00:00")
    assert sent == [{"scheduled_at": "2026-11-23T10:00:00+00:00"}]  # one failure does not stop the others
    errors = [line for line in log_lines() if line["message"].startswith("periodic job not scheduled")]
    assert errors[0]["actor"] == "sweep_outbox" and errors[0]["level"] == "error"


def _worker(namespace: str) -> subprocess.Popen:
    env = dict(os.environ, REDELIVERY_NAMESPACE=namespace)
    return subprocess.Popen([sys.executable, "-m", "dramatiq", "tests.redelivery_actors", "--processes", "1",
                             "--threads", "1"], env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _wait(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def test_the_messages_a_killed_worker_held_come_back_within_30_seconds():
    # Every command but an acknowledgement runs Dramatiq's maintenance; an idle consumer polls each second.
    assert MAINTENANCE_CHANCE == 1_000_000 and HEARTBEAT_TIMEOUT_MS / 1000 + 1 <= 25
    namespace, key = f"redelivery-{uuid.uuid4().hex[:8]}", f"redelivery:{uuid.uuid4().hex}"
    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    producer = RedisBroker(url=os.environ["REDIS_URL"], namespace=namespace)
    producer.declare_queue("default")
    producer.enqueue(Message(queue_name="default", actor_name="hold", args=(key,), kwargs={}, options={}))
    first = _worker(namespace)
    second = None
    try:
        assert _wait(lambda: client.llen(key) == 1, 60), "the first worker never took the message"
        os.killpg(first.pid, signal.SIGKILL)  # the worker and its processes, with the message in hand
        first.wait(timeout=10)
        killed_at = time.monotonic()
        second = _worker(namespace)
        came_back = _wait(lambda: client.lrange(key, -1, -1) == [b"done"], 30)
        print(f"redelivered and done {time.monotonic() - killed_at:.1f} s after the kill")
        assert came_back, f"not redelivered within 30 s: {client.lrange(key, 0, -1)}"
        assert client.lrange(key, 0, -1)[1].startswith(b"start ")  # run again, by the second worker
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=30)
        producer.flush_all()
        for stale in client.scan_iter(f"{namespace}:*"):
            client.delete(stale)
        client.delete(key)

