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
    """Wait (bounded) until `count` threads wait in `marks.follow` for a statement to come."""
    deadline = time.monotonic() + 10
    while len(marks._followers) < count and time.monotonic() < deadline:
        time.sleep(0.001)
    assert len(marks._followers) == count


@pytest.mark.committed
def test_the_marks_left_while_a_statement_runs_go_in_the_next_one_and_their_follow_up_after_its_commit(
        connection):
    ids = _rows(20)
    followed: list[tuple[list, int]] = []
    first_held, release = threading.Event(), threading.Event()

    def follow_up(tokens: list) -> None:  # on the writing thread: a connection of its own reads the marks
        with database.connection_context():
            followed.append((sorted(tokens), _done(ids)))
        if len(followed) == 1:  # the first statement's follow-up is slow: the other threads' marks wait
            first_held.set()
            assert release.wait(10)

    marks = outbox.DoneMarks()
    marks.set_follow_up(follow_up)
    answers: dict[int, bool] = {}

    def worker_thread(row_id: int) -> None:
        marks.add(row_id, f"delivery-{row_id}")
        answers[row_id] = marks.follow(f"delivery-{row_id}", row_id)

    with sql_statements() as statements:
        threads = [threading.Thread(target=worker_thread, args=(row_id,)) for row_id in ids]
        threads[0].start()  # writes its own mark at once
        assert first_held.wait(10)
        for thread in threads[1:]:
            thread.start()
        _followed(marks, len(ids) - 1)
        assert _done(ids) == 1  # the others wait for the statement on its way to end
        release.set()
        for thread in threads:
            thread.join(timeout=10)
        writes = [statement for statement in statements if "SET done_at = d.at" in statement]
    assert len(writes) == 2
    assert followed == [([ids[0]], 1), (sorted(ids[1:]), 20)]  # each after its statement's commit
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

    marks = outbox.DoneMarks(retry_seconds=0.01)
    marks.set_follow_up(follow_up)
    marks.add(row_id, "delivery")
    follower = threading.Thread(target=marks.follow, args=("delivery", "ack"))
    follower.start()
    follower.join(timeout=10)
    assert not follower.is_alive()  # released once the second try took
    assert calls == [["ack"], ["ack"]]
    assert _done([row_id]) == 1
    assert marks.flush(timeout=1)


@pytest.mark.committed
def test_a_message_is_acknowledged_only_once_its_row_is_marked_done(broker, worker, connection, monkeypatch):
    acknowledge = outbox.done_marks._follow_up
    seen: list[tuple[int, int]] = []

    def observed(tokens: list) -> None:
        with database.connection_context():
            seen.append((_done([row_id]), broker.client.hlen(f"{broker.namespace}:default.msgs")))
        acknowledge(tokens)

    monkeypatch.setattr(outbox.done_marks, "_follow_up", observed)
    [row_id] = _rows(1, "acknowledged")
    broker.join("default", timeout=10_000)
    assert seen == [(1, 1)]  # at the acknowledgement: the row done, its message still queued
    assert _done([row_id]) == 1 and broker.client.hlen(f"{broker.namespace}:default.msgs") == 0


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
