"""The worker's done marks: written by one thread per process, many in one statement, and the
broker's acknowledgement of each message only after its row's mark is committed."""

import threading
import time

import dramatiq
import pytest

from backend import outbox
from backend.db import database, transaction
from tests.support import sql_statements


@dramatiq.actor(queue_name="default", max_retries=0, time_limit=10_000, throws=())
def record_mark_probe(token: str) -> None:
    dramatiq.get_broker().client.rpush(f"mark-probe:{token}", "ran")


def _ran(broker, token: str) -> bool:
    return bool(broker.client.llen(f"mark-probe:{token}"))


@pytest.fixture
def connection():
    with database.connection_context():
        yield


def _done(ids: list[int]) -> int:
    return outbox.OutboxMessage.select().where(outbox.OutboxMessage.id.in_(ids),
                                               outbox.OutboxMessage.done_at.is_null(False)).count()


def _rows(count: int, prefix: str = "mark") -> list[int]:
    with transaction():
        rows = [outbox.enqueue("record_mark_probe", f"{prefix}-{n}") for n in range(count)]
    return [row.id for row in rows]


def _followed(marks: outbox.DoneMarks, count: int) -> None:
    """Wait (bounded) until `count` threads wait in `marks.follow`."""
    deadline = time.monotonic() + 10
    while len(marks._followers) < count and time.monotonic() < deadline:
        time.sleep(0.001)
    assert len(marks._followers) == count


@pytest.mark.committed
def test_the_marks_of_many_threads_go_in_one_statement_and_their_follow_up_after_its_commit(connection):
    ids = _rows(20)
    followed: list[tuple[list, int]] = []

    def follow_up(tokens: list) -> None:  # on the writer's thread: a connection of its own reads the marks
        with database.connection_context():
            followed.append((sorted(tokens), _done(ids)))

    marks = outbox.DoneMarks(linger=30)  # held until flushed: every thread's mark is waiting by then
    marks.set_follow_up(follow_up)
    answers: dict[int, bool] = {}

    def worker_thread(row_id: int) -> None:
        marks.add(row_id, f"delivery-{row_id}")
        answers[row_id] = marks.follow(f"delivery-{row_id}", row_id)

    with sql_statements() as statements:
        threads = [threading.Thread(target=worker_thread, args=(row_id,)) for row_id in ids]
        for thread in threads:
            thread.start()
        _followed(marks, len(ids))
        assert _done(ids) == 0 and not followed  # every thread waits for its mark and follow-up
        assert marks.flush(timeout=10)
        for thread in threads:
            thread.join()
        writes = [statement for statement in statements if "SET done_at = d.at" in statement]
    assert len(writes) == 1
    assert followed == [(sorted(ids), 20)]  # once, after the 20 marks were committed
    assert all(answers.values()) and len(answers) == 20
    assert not marks.follow(f"delivery-{ids[0]}", "late")  # written: the caller acknowledges itself


@pytest.mark.committed
def test_a_follow_up_that_failed_is_tried_again_and_its_thread_waits_for_it(connection):
    [row_id] = _rows(1)
    calls: list[list] = []

    def follow_up(tokens: list) -> None:
        calls.append(tokens)
        if len(calls) == 1:
            raise ConnectionError("Redis away")

    marks = outbox.DoneMarks(linger=30, retry_seconds=0.01)  # held until flushed
    marks.set_follow_up(follow_up)
    marks.add(row_id, "delivery")
    follower = threading.Thread(target=marks.follow, args=("delivery", "ack"))
    follower.start()
    _followed(marks, 1)
    assert marks.flush(timeout=10)
    follower.join(timeout=10)
    assert not follower.is_alive()
    assert calls == [["ack"], ["ack"]]  # the second one took
    assert _done([row_id]) == 1


@pytest.mark.committed
def test_a_message_is_acknowledged_only_once_its_row_is_marked_done(broker, connection, monkeypatch):
    from dramatiq import Worker

    monkeypatch.setattr(outbox.done_marks, "linger", 30)  # the mark waits until flushed
    broker.client.delete("mark-probe:acknowledged-0")
    [row_id] = _rows(1, "acknowledged")
    assert outbox.flush()
    worker = Worker(broker, worker_timeout=100, worker_threads=1)
    worker.start()
    try:
        deadline = time.monotonic() + 10
        while not _ran(broker, "acknowledged-0") and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _ran(broker, "acknowledged-0")
        assert _done([row_id]) == 0
        assert broker.client.hlen(f"{broker.namespace}:default.msgs") == 1  # not acknowledged before its mark
        assert outbox.done_marks.flush(timeout=10)
        assert _done([row_id]) == 1
        assert broker.client.hlen(f"{broker.namespace}:default.msgs") == 0
    finally:
        monkeypatch.setattr(outbox.done_marks, "linger", 0)
        worker.stop()


def test_a_consumer_whose_window_is_full_fetches_again_once_half_of_it_was_acknowledged(broker):
    for n in range(6):
        record_mark_probe.send(f"window-{n}")
    consumer = broker.consume("default", prefetch=4, timeout=30_000)
    try:
        window = [next(consumer) for _ in range(4)]
        assert all(message is not None for message in window)
        acknowledging = threading.Thread(target=lambda: [consumer.ack(message) for message in window[:2]])
        began = time.monotonic()
        acknowledging.start()
        following = next(consumer)  # waits for the acknowledgements, not for the 30 s timeout
        acknowledging.join()
        assert following is not None and following.message_id not in {m.message_id for m in window}
        assert time.monotonic() - began < 10
    finally:
        consumer.close()
