"""The Dramatiq broker, set up once per process before any actor is declared.

Dramatiq's own `RedisBroker` with public middleware only: periodiq (schedules), the request-id
middleware (a message carries the id of the request that caused it), a database session per
message, the outbox completion (a message that came from an outbox row closes it once its actor
has done the work), periodic jobs whose failure waits for the next tick, the broker's epoch check
every few seconds in each worker, and the worker's boot heap frozen. `install_outbox_sender`
makes `backend.outbox` hand committed rows to this broker (`broker.enqueue`). The broker's epoch
marker (`backend.broker_epoch`) is checked by each worker, by the clock's sweeper, and by a
process's hand-over thread once a Redis connection was opened again: work a Redis lost with its
data is handed over again within seconds.

A killed worker's messages come back through Dramatiq's own maintenance, which its public
settings tune: every worker process beats (each command its consumers send to Redis records it
alive) and every command but an acknowledgement runs the maintenance (`MAINTENANCE_CHANCE`), which
puts back on their queue the messages of a worker silent for `HEARTBEAT_TIMEOUT_MS`. An idle
consumer polls its queue at least every second, so those messages are queued again about that
timeout after the kill, where Dramatiq's defaults (a minute, one command in a thousand) took
minutes.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Sequence

import dramatiq
import redis
from dramatiq.brokers.redis import RedisBroker
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

# A worker process not heard of for HEARTBEAT_TIMEOUT_MS is dead: the maintenance puts the
# messages it held back on their queues. MAINTENANCE_CHANCE is per million commands (Dramatiq's
# scale): every command but an acknowledgement runs it. A live worker's consumers poll every
# queue at least once a second, whatever its actors are doing, so it is never declared dead.
HEARTBEAT_TIMEOUT_MS = 15_000
MAINTENANCE_CHANCE = 1_000_000
# How often each worker process compares the broker's epoch marker (`EpochCheck`).
EPOCH_CHECK_INTERVAL_S = 5.0


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
    Retries' decision: `message.failed` means no retry will come. The hook runs before the worker
    acknowledges the message, so a worker that dies before the row is closed leaves the message
    to Redis. An actor that returned, or raised an exception it declares in `throws` (its
    answer), closes the row; retries exhausted is a dead row; a failure that will be retried
    pushes the row's redelivery past that retry. Each mark is one UPDATE, a short transaction of
    its own. A failure here only means the sweeper re-sends the row later, which idempotent
    actors absorb."""

    def after_process_message(self, broker, message, *, result=None, exception=None) -> None:
        outbox_id = message.options.get("outbox_id")
        if outbox_id is None:
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

    @staticmethod
    def _settle(broker, message, outbox_id: int, exception: BaseException | None) -> None:
        throws = broker.get_actor(message.actor_name).options.get("throws") or ()
        if exception is None or (throws and isinstance(exception, throws)):
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


class EpochCheck(Middleware):
    """In each worker process, a thread that compares the broker's epoch marker every `interval`
    seconds (`check_epoch`): work a Redis lost with its data is handed over again within seconds,
    not at the clock's next sweep."""

    def __init__(self, interval: float = EPOCH_CHECK_INTERVAL_S) -> None:
        self.interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def after_worker_boot(self, broker, worker) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="broker-epoch-check", daemon=True)
        self._thread.start()

    def before_worker_shutdown(self, broker, worker) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.interval + 1)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            check_epoch()


class FrozenBootHeap(Middleware):
    """What a worker process holds once booted (every module, the actors, the PDF renderer) lives
    as long as the process: once the `dramatiq` command has loaded the actors, before the
    worker's threads start, it leaves the cyclic garbage collector's generations (`gc.freeze()`,
    as a web worker does after boot, ops/gunicorn.conf.py). Otherwise every full collection walks
    it all again, and rendering an invoice PDF allocates enough for one or two each time. Only a
    worker process of the command runs the hook (a `Worker` started in a test does not).

    It also collects the youngest generation less often than Python's default
    (`WORKER_GC_THRESHOLD`): a PDF render allocates millions of short-lived objects, and at the
    default the collector runs many times a render, promotes what the render still holds and
    walks the whole unfrozen heap about once a render. The cyclic garbage waiting for a
    collection stays a few megabytes."""

    def after_process_boot(self, broker) -> None:
        load_renderer()  # imported before the freeze: weasyprint's modules are half the heap
        gc.collect()
        gc.freeze()
        gc.set_threshold(*WORKER_GC_THRESHOLD)
        log.info("worker boot heap frozen", extra={"fields": {"objects": gc.get_freeze_count(),
                                                              "threshold": list(gc.get_threshold())}})


# The cyclic collector's thresholds in a worker process (`FrozenBootHeap`; Python's are 700, 10, 10).
WORKER_GC_THRESHOLD = (50_000, 20, 20)


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
    broker = RedisBroker(client=redis.Redis(connection_pool=pool), namespace=namespace,
                         heartbeat_timeout=HEARTBEAT_TIMEOUT_MS, maintenance_chance=MAINTENANCE_CHANCE)
    broker.add_middleware(PeriodiqMiddleware(skip_delay=60))
    broker.add_middleware(RequestIdMiddleware())
    broker.add_middleware(DatabaseSession())
    broker.add_middleware(OutboxCompletion(), before=Retries)
    # Also before Retries, after OutboxCompletion: its after-hook runs between theirs (reverse order).
    broker.add_middleware(PeriodicFailures(), before=Retries)
    broker.add_middleware(EpochCheck())
    broker.add_middleware(FrozenBootHeap())
    for queue in QUEUES:
        broker.declare_queue(queue)
    dramatiq.set_broker(broker)
    install_outbox_sender(broker)
    global _watch
    _watch = EpochWatch(broker.client, namespace)
    outbox.set_redelivery(outbox.Redelivery(after_seconds=config.outbox_redeliver_after_seconds,
                                            max_handovers=config.outbox_max_handovers))
    _broker = broker
    return broker


def install_outbox_sender(broker) -> None:
    """Hand outbox rows to `broker`, one `broker.enqueue` each (the enqueue middleware runs)."""

    def send(rows: Sequence[outbox.OutboxMessage]) -> list[BaseException | None]:
        outcomes = [_enqueue(broker, row) for row in rows]
        if _connected.is_set():
            _connected.clear()
            check_epoch()
        return outcomes

    outbox.set_sender(send)


def _enqueue(broker, row: outbox.OutboxMessage) -> BaseException | None:
    """None once the broker took `row`'s message, else the error (an actor this process does not
    know, Redis away): that row only stays unsent."""
    try:
        broker.enqueue(broker.get_actor(row.actor_name).message_with_options(
            args=tuple(row.args), request_id=row.request_id, outbox_id=row.id))
    except Exception as exc:
        return exc
    return None


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
