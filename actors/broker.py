"""The Dramatiq broker, set up once per process before any actor is declared.

Redis broker with: periodiq (schedules), the request-id middleware (a message carries the id of
the request that caused it), a database session per message, the outbox completion (a message
that came from an outbox row closes it once its actor has done the work), periodic jobs whose
failure waits for the next tick, and a maintenance pass every few seconds in each worker so that
the messages a killed worker held come back within 30 s. `install_outbox_sender` makes
`backend.outbox` hand committed rows to this broker. The broker's epoch marker
(`backend.broker_epoch`) is checked by each worker's maintenance pass, by the clock's sweeper,
and by a process's hand-over thread once a Redis connection was opened again: work a Redis lost
with its data is handed over again within seconds.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Sequence
from uuid import uuid4

import dramatiq
import redis
from dramatiq import Message
from dramatiq.brokers.redis import RedisBroker, _RedisConsumer
from dramatiq.common import current_millis
from dramatiq.middleware import Middleware, Retries
from periodiq import PeriodiqMiddleware
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from backend import db, outbox
from backend.broker_epoch import EpochWatch
from backend.config import Config
from backend.context import bind_request_id, current_request_id, reset_request_id
from backend.documents.rendering import load_renderer
from backend.logs import get_logger

log = get_logger("worker")
QUEUES = ("default", "webhooks", "documents", "einvoicing", "printing", "email", "billing")
_broker: RedisBroker | None = None
_watch: EpochWatch | None = None
# Set each time this process opens a Redis connection (the first one, more threads, or Redis back
# after an outage or a restart): the next hand-over checks the broker's epoch.
_connected = threading.Event()

# A worker process that has not been heard of for HEARTBEAT_TIMEOUT_MS is dead: a maintenance pass
# puts the messages it held back on their queues. Every live worker runs a pass (which is also its
# heartbeat) every MAINTENANCE_INTERVAL_S, so a killed worker's messages come back within
# HEARTBEAT_TIMEOUT_MS + MAINTENANCE_INTERVAL_S (20 s); Dramatiq's own random maintenance (one
# command in a thousand) took minutes. A live worker is never declared dead: its maintenance thread
# beats whatever its actors are doing.
HEARTBEAT_TIMEOUT_MS = 15_000
MAINTENANCE_INTERVAL_S = 5.0


class RequestIdMiddleware(Middleware):
    """Stamp messages with the current request id; bind it while the message is processed."""

    def before_enqueue(self, broker, message, delay) -> None:
        if not message.options.get("request_id"):
            request_id = current_request_id()
            if request_id:
                message.options["request_id"] = request_id

    def before_process_message(self, broker, message) -> None:
        message.options["_request_id_token"] = bind_request_id(message.options.get("request_id"))

    def after_process_message(self, broker, message, *, result=None, exception=None) -> None:
        token = message.options.pop("_request_id_token", None)
        if token is not None:
            reset_request_id(token)

    after_skip_message = after_process_message


class DatabaseSession(Middleware):
    """One pooled connection per message, given back however the message ends."""

    def before_process_message(self, broker, message) -> None:
        db.open_connection()

    def after_process_message(self, broker, message, *, result=None, exception=None) -> None:
        db.close_connection()

    after_skip_message = after_process_message


class OutboxCompletion(Middleware):
    """Close the outbox row a message came from once the work is done (end-to-end at least once).

    Added before `Retries` so that its after-hooks (which Dramatiq runs in reverse order) see
    Retries' decision: `message.failed` means no retry will come. An actor that returned leaves
    its row's mark to `outbox.done_marks`, which writes the marks of the worker's threads in one
    statement, then acknowledges their messages (`PromptRedisBroker.do_ack`); the worker's
    shutdown writes what waits. A declared `throws`
    exception is the actor's answer (done, at once); retries exhausted is a dead row; a failure
    that will be retried pushes the row's redelivery past that retry. A failure here only means
    the sweeper re-sends the row later, which idempotent actors absorb."""

    def after_process_message(self, broker, message, *, result=None, exception=None) -> None:
        outbox_id = message.options.get("outbox_id")
        if outbox_id is None:
            return
        if exception is None:  # written with others by the process's done-mark thread, then acknowledged
            outbox.done_marks.add(outbox_id, message.options.get("redis_message_id", message.message_id))
            return
        try:
            opened = db.open_connection()
            try:
                self._settle(broker, message, outbox_id, exception)
            finally:
                if opened:
                    db.close_connection()
        except Exception as exc:
            log.warning("outbox completion not recorded", extra={"fields": {"outboxId": outbox_id, "error": str(exc)}})

    def after_skip_message(self, broker, message) -> None:
        self.after_process_message(broker, message, exception=RuntimeError("message skipped"))

    def after_worker_shutdown(self, broker, worker) -> None:
        if not outbox.done_marks.flush(timeout=10):
            log.warning("outbox done marks not all written at shutdown; their messages come back")

    @staticmethod
    def _settle(broker, message, outbox_id: int, exception: BaseException) -> None:
        throws = broker.get_actor(message.actor_name).options.get("throws") or ()
        if throws and isinstance(exception, throws):
            outbox.mark_done(outbox_id)
        elif message.failed:
            outbox.mark_dead(outbox_id, f"{type(exception).__name__}: {exception}")
        else:  # Dramatiq retries with backoff 15 s x 2^n: leave it that long before re-sending
            outbox.postpone_redelivery(outbox_id, 15 * 2 ** min(message.options.get("retries", 1), 12))


class PeriodicFailures(Middleware):
    """A periodic job that fails (PostgreSQL or Redis away, a bug) is logged and acknowledged: the
    next tick runs it again. It never lands in the dead letters, where nothing would look at it.
    Its after_ hook runs after the one of Dramatiq's Retries middleware, which marked the message failed."""

    def after_process_message(self, broker, message, *, result=None, exception=None) -> None:
        if exception is None or "periodic" not in broker.get_actor(message.actor_name).options:
            return
        message.failed = False
        log.error(
            "periodic job failed; the next tick runs it again",
            extra={"fields": {"actor": message.actor_name, "error": f"{type(exception).__name__}: {exception}"}},
        )


class Maintenance(Middleware):
    """In each worker process, a thread that runs the broker's maintenance on every queue every
    `interval` seconds: requeue the messages of workers silent for the heartbeat timeout, expire
    old dead letters. Its dispatch calls are this process's heartbeat too."""

    def __init__(self, interval: float = MAINTENANCE_INTERVAL_S) -> None:
        self.interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def after_worker_boot(self, broker, worker) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, args=(broker,), name="broker-maintenance", daemon=True)
        self._thread.start()

    def before_worker_shutdown(self, broker, worker) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.interval + 1)

    def _run(self, broker) -> None:
        while not self._stop.wait(self.interval):
            try:
                run_maintenance(broker)
            except Exception as exc:  # Redis away: the next pass tries again
                log.warning("broker maintenance failed", extra={"fields": {"error": str(exc)}})
                continue
            check_epoch()


def run_maintenance(broker: RedisBroker) -> None:
    """One maintenance pass over every declared queue (delay queues included), through Dramatiq's
    own dispatch script with its maintenance flag set (`qsize` changes nothing)."""
    dispatch = broker.scripts["dispatch"]
    for queue in sorted(broker.get_declared_queues()):
        dispatch(
            args=["qsize", int(time.time() * 1000), queue, broker.broker_id, broker.heartbeat_timeout,
                  broker.dead_message_ttl, 1, broker._max_unpack_size()],
            keys=[broker.namespace],
        )


class FrozenBootHeap(Middleware):
    """What a worker process holds once booted (every module, the actors, the PDF renderer, about
    140,000 objects) lives as long as the process: once the `dramatiq` command has loaded the
    actors, before the worker's threads start, it leaves the cyclic garbage collector's
    generations (`gc.freeze()`, as a web worker does after boot, ops/gunicorn.conf.py). Otherwise
    every full collection walks it all again, and rendering an invoice PDF allocates enough for
    one or two each time: a fifth of the worker's CPU per self-billed invoice (438 -> 355 ms,
    `vitrine bench monthend`, docs/benchmarks.md). What messages allocate is collected as before.
    Only a worker process of the command runs the hook (a `Worker` started in a test does not).

    It also collects the youngest generation every `WORKER_GC_THRESHOLD[0]` allocations instead
    of Python's 700: a PDF render allocates millions of short-lived objects, and at 700 the
    collector ran 133 times a render, promoted what the render still held and walked the whole
    unfrozen heap about once a render (11 % of a render's CPU, `vitrine bench monthend`,
    docs/benchmarks.md). The cyclic garbage waiting for a collection stays a few megabytes."""

    def after_process_boot(self, broker) -> None:
        load_renderer()  # imported before the freeze: weasyprint's modules are half the heap
        gc.collect()
        gc.freeze()
        gc.set_threshold(*WORKER_GC_THRESHOLD)
        log.info("worker boot heap frozen", extra={"fields": {"objects": gc.get_freeze_count(),
                                                              "threshold": list(gc.get_threshold())}})


# The cyclic collector's thresholds in a worker process (`FrozenBootHeap`; Python's are 700, 10, 10).
WORKER_GC_THRESHOLD = (50_000, 20, 20)


# A consumer with nothing to fetch backs off exponentially, up to the worker timeout (1 s). A batch
# status advance waits in its request for the `printing` queue to pick its run up (its groups then
# follow each other inside one message): that queue's consumers back off at most
# PROMPT_QUEUES[queue] ms, so an idle worker polls it 40 to 80 times a second, one short Lua call each.
PROMPT_QUEUES = {"printing": 25}


class WindowConsumer(_RedisConsumer):
    """Dramatiq's Redis consumer, except when its prefetch window is full (every message it fetched
    still being processed): Dramatiq's sleeps 5 to 10 ms, then 10 to 20 ms and more, whatever the
    worker threads do meanwhile, and a busy worker's threads finished a window of 16 messages in
    less than that (the consumer's sleep was a third of its samples, `bench outbox`). This one
    waits until half the window was acknowledged (or rejected), then fetches as Dramatiq does."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._room = threading.Event()

    def ack(self, message) -> None:
        try:
            super().ack(message)
        finally:
            self._released()

    def nack(self, message) -> None:
        try:
            super().nack(message)
        finally:
            self._released()

    def _released(self) -> None:
        if self.outstanding_message_count <= self.prefetch // 2:
            self._room.set()

    def __next__(self):
        if not self.message_cache and self.outstanding_message_count >= self.prefetch:
            self._room.clear()
            if self.outstanding_message_count > self.prefetch // 2:  # nothing released since the test
                self._room.wait(self.timeout / 1000)
        return super().__next__()


class PromptRedisBroker(RedisBroker):
    """The Redis broker, whose consumers of `PROMPT_QUEUES` poll more often when idle, and whose
    acknowledgement of a message waits for its outbox row's done mark (`outbox.done_marks`)."""

    @property
    def consumer_class(self):
        return WindowConsumer

    def consume(self, queue_name: str, prefetch: int = 1, timeout: int = 5000):
        return super().consume(queue_name, prefetch, min(timeout, PROMPT_QUEUES.get(queue_name, timeout)))

    def do_ack(self, queue_name: str, message_id: str):
        """Dramatiq's `ack`, called by the worker thread once the message is processed. While the
        message's outbox row waits for its done mark, the message is acknowledged once the mark
        is written, with the rest of its statement's in one round trip (`acknowledge_many`), and
        the worker thread waits for that (`outbox.DoneMarks.follow`)."""
        if outbox.done_marks.follow(message_id, (queue_name, message_id)):
            return None
        return self._dispatch("ack")(queue_name, message_id)


def setup_broker(config: Config, *, namespace: str = "dramatiq") -> RedisBroker:
    """Create the broker for `config.redis_url` and make it the global one (idempotent)."""
    global _broker
    if _broker is not None:
        return _broker
    # Short socket timeouts: a stalled Redis fails a hand-over (the sweeper re-sends) instead of
    # hanging a thread; the consumers poll, they never block on a read. The pool is built here:
    # given a URL, Dramatiq builds one without these settings. A command that meets a dead
    # connection (Redis restarted since) is tried again on a new one, twice at most, at once:
    # without this the first hand-over on each pooled connection after a restart failed.
    pool = redis.ConnectionPool.from_url(
        config.redis_url, socket_timeout=5, socket_connect_timeout=3, redis_connect_func=_on_connect,
        retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 2, supported_errors=(redis.ConnectionError,)))
    broker = PromptRedisBroker(client=redis.Redis(connection_pool=pool), namespace=namespace,
                               heartbeat_timeout=HEARTBEAT_TIMEOUT_MS)
    broker.add_middleware(PeriodiqMiddleware(skip_delay=60))
    broker.add_middleware(RequestIdMiddleware())
    broker.add_middleware(DatabaseSession())
    broker.add_middleware(OutboxCompletion(), before=Retries)
    # Also before Retries, after OutboxCompletion: its after-hook runs between theirs (reverse order).
    broker.add_middleware(PeriodicFailures(), before=Retries)
    broker.add_middleware(Maintenance())
    broker.add_middleware(FrozenBootHeap())
    for queue in QUEUES:
        broker.declare_queue(queue)
    dramatiq.set_broker(broker)
    install_outbox_sender(broker)
    outbox.done_marks.set_follow_up(lambda acks: acknowledge_many(broker, acks))
    global _watch
    _watch = EpochWatch(broker.client, namespace)
    outbox.set_redelivery(outbox.Redelivery(after_seconds=config.outbox_redeliver_after_seconds,
                                            max_handovers=config.outbox_max_handovers))
    _broker = broker
    return broker


def install_outbox_sender(broker) -> None:
    """Hand outbox rows to `broker`, a hand-over batch at a time (`enqueue_many`)."""

    def send(rows: Sequence[outbox.OutboxMessage]) -> list[BaseException | None]:
        outcomes: list[BaseException | None] = [None] * len(rows)
        messages: dict[int, Message] = {}
        for n, row in enumerate(rows):
            try:
                messages[n] = broker.get_actor(row.actor_name).message_with_options(
                    args=tuple(row.args), request_id=row.request_id, outbox_id=row.id)
            except Exception as exc:  # an actor this process does not know: that row only
                outcomes[n] = exc
        for n, outcome in zip(messages, enqueue_many(broker, list(messages.values())), strict=True):
            outcomes[n] = outcome
        if _connected.is_set():
            _connected.clear()
            check_epoch()
        return outcomes

    outbox.set_sender(send)


def _on_connect(connection) -> None:
    connection.on_connect()
    _connected.set()


def check_epoch() -> None:
    """Compare the broker's epoch marker with what this process last saw, and hand over again
    what a Redis that lost its data lost (`backend.broker_epoch`). Never raises: Redis or
    PostgreSQL away, the next check (seconds away) tries again."""
    if _watch is None:
        return
    try:
        opened = db.open_connection()
        try:
            _watch.check()
        finally:
            if opened:
                db.close_connection()
    except Exception as exc:
        log.warning("broker epoch check failed", extra={"fields": {"error": f"{type(exc).__name__}: {exc}"}})


def enqueue_many(broker, messages: Sequence[Message]) -> list[BaseException | None]:
    """`broker.enqueue` of each message, for a Redis broker in one pipelined round trip (Dramatiq's
    own `dispatch` script, as `RedisBroker.enqueue` runs it, and the same enqueue middleware hooks);
    one outcome per message: None once Redis took it, else the error. A hand-over of 500 rows was
    500 round trips, which waiting for Redis on a loaded machine made most of the outbox's cost.
    A single message is one script call, as `enqueue` makes it (a pipeline first asks Redis
    whether the script is loaded)."""
    if not isinstance(broker, RedisBroker):
        return [_outcome(broker.enqueue, message) for message in messages]
    outcomes: list[BaseException | None] = [None] * len(messages)
    ready: list[tuple[int, Message]] = []
    for n, message in enumerate(messages):
        # A Redis message id of its own for each enqueue, as RedisBroker.enqueue gives it.
        message = message.copy(options={"redis_message_id": str(uuid4())})
        outcomes[n] = _outcome(broker.emit_before, "enqueue", message, None)
        if outcomes[n] is None:
            ready.append((n, message))
    if not ready:
        return outcomes
    dispatch, keys = broker.scripts["dispatch"], [broker.namespace]
    # Dramatiq's occasional maintenance pass, drawn once per batch (the workers' Maintenance runs it anyway).
    calls = [["enqueue", current_millis(), message.queue_name, broker.broker_id, broker.heartbeat_timeout,
              broker.dead_message_ttl, broker._should_do_maintenance("enqueue") if not n else 0,
              broker._max_unpack_size(), message.options["redis_message_id"], message.encode()]
             for n, (_, message) in enumerate(ready)]
    try:
        if len(calls) == 1:
            results = [dispatch(keys=keys, args=calls[0])]
        else:
            with broker.client.pipeline(transaction=False) as pipe:
                for args in calls:
                    dispatch(keys=keys, args=args, client=pipe)
                results = pipe.execute(raise_on_error=False)
    except Exception as exc:  # Redis away: none is known to be taken (the sweeper re-sends them)
        for n, _ in ready:
            outcomes[n] = exc
        return outcomes
    for (n, message), result in zip(ready, results, strict=True):
        if isinstance(result, Exception):
            outcomes[n] = result
        elif (error := _outcome(broker.emit_after, "enqueue", message, None)) is not None:
            # Redis has the message: it counts as sent (a re-send would only duplicate it).
            log.warning("enqueue middleware failed after the message was queued",
                        extra={"fields": {"actor": message.actor_name, "error": str(error)}})
    return outcomes


def acknowledge_many(broker: RedisBroker, acks: Sequence[tuple[str, str]]) -> None:
    """Dramatiq's `ack` of each (queue, Redis message id), in one pipelined round trip (its own
    `dispatch` script, as `RedisBroker.do_ack` runs it); raises when Redis did not take them all.
    Acknowledging a message twice changes nothing (the script finds it gone)."""
    dispatch, keys = broker.scripts["dispatch"], [broker.namespace]
    calls = [["ack", current_millis(), queue_name, broker.broker_id, broker.heartbeat_timeout,
              broker.dead_message_ttl, 0, broker._max_unpack_size(), message_id] for queue_name, message_id in acks]
    if len(calls) == 1:
        dispatch(keys=keys, args=calls[0])
        return
    try:  # the script by its hash alone: the consumers keep it loaded (a pipeline of the script asks first)
        with broker.client.pipeline(transaction=False) as pipe:
            for args in calls:
                pipe.evalsha(dispatch.sha, len(keys), *keys, *args)
            pipe.execute()
    except redis.exceptions.NoScriptError:  # Redis restarted since: each call loads it again
        for args in calls:
            dispatch(keys=keys, args=args)


def _outcome(call, *args) -> BaseException | None:
    try:
        call(*args)
    except Exception as exc:
        return exc
    return None


def queue_sizes(broker: RedisBroker) -> list[dict]:
    """Per queue: messages waiting (or in flight), delayed, and dead-lettered."""
    client, ns = broker.client, broker.namespace
    rows = []
    for queue in sorted(broker.get_declared_queues()):
        if queue.endswith(".DQ"):
            continue
        rows.append(
            {
                "queue": queue,
                "messages": client.hlen(f"{ns}:{queue}.msgs"),
                "delayed": client.hlen(f"{ns}:{queue}.DQ.msgs"),
                "dead": client.hlen(f"{ns}:{queue}.XQ.msgs"),
            }
        )
    return rows
