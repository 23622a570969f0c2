"""The Dramatiq broker, set up once per process before any actor is declared.

Redis broker with: periodiq (schedules), the request-id middleware (a message carries the id of
the request that caused it), and a database session per message. `install_outbox_sender`
makes `backend.outbox` hand committed rows to this broker.
"""

from __future__ import annotations

import dramatiq
from dramatiq.brokers.redis import RedisBroker
from dramatiq.middleware import Middleware
from periodiq import PeriodiqMiddleware

from backend import db, outbox
from backend.config import Config
from backend.context import bind_request_id, current_request_id, reset_request_id
from backend.logs import get_logger

log = get_logger("worker")
QUEUES = ("default", "webhooks", "documents", "einvoicing", "printing", "email", "billing")
_broker: RedisBroker | None = None


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


def setup_broker(config: Config, *, namespace: str = "dramatiq") -> RedisBroker:
    """Create the broker for `config.redis_url` and make it the global one (idempotent)."""
    global _broker
    if _broker is not None:
        return _broker
    broker = RedisBroker(url=config.redis_url, namespace=namespace)
    broker.add_middleware(PeriodiqMiddleware(skip_delay=60))
    broker.add_middleware(RequestIdMiddleware())
    broker.add_middleware(DatabaseSession())
    for queue in QUEUES:
        broker.declare_queue(queue)
    dramatiq.set_broker(broker)
    install_outbox_sender(broker)
    _broker = broker
    return broker


def install_outbox_sender(broker) -> None:
    def send(row) -> None:
        actor = broker.get_actor(row.actor_name)
        broker.enqueue(
            actor.message_with_options(args=tuple(row.args), request_id=row.request_id, outbox_id=row.id)
        )

    outbox.set_sender(send)


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
