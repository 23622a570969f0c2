"""The outbox: follow-up work recorded in the same transaction as the change that causes it.

`enqueue("actor_name", *args)` inserts a row inside the caller's `transaction()`; after the
commit the row is handed to the broker by the sender the process installed (`set_sender`) and
marked sent. A row whose send failed (Redis down, crash between commit and send) stays unsent;
`sweep()`, run every minute by the clock, re-sends rows unsent for longer than
`OUTBOX_RESEND_AFTER_SECONDS`. Rows of a rolled-back transaction never exist, so never run.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from peewee import BigAutoField, CharField, IntegerField, TextField
from playhouse.postgres_ext import BinaryJSONField, DateTimeTZField

from backend import clock
from backend.context import current_request_id
from backend.db import database, in_transaction, on_commit, transaction, transaction_scope
from backend.logs import get_logger
from backend.model import BaseModel, created_at_field

log = get_logger("outbox")


class OutboxMessage(BaseModel):
    id = BigAutoField()
    actor_name = CharField(max_length=120)
    args = BinaryJSONField(default=list)
    request_id = CharField(max_length=128, null=True)
    created_at = created_at_field()
    sent_at = DateTimeTZField(null=True)
    attempts = IntegerField(default=0)
    last_error = TextField(null=True)

    class Meta:
        table_name = "outbox_message"


Sender = Callable[[OutboxMessage], None]
_sender: Sender | None = None


def set_sender(sender: Sender | None) -> None:
    """Install how this process hands a row to the broker (set once at boot)."""
    global _sender
    _sender = sender


def enqueue(actor_name: str, *args: object) -> OutboxMessage:
    """Record `actor_name(*args)` to run once the enclosing transaction commits."""
    if not in_transaction():
        raise RuntimeError("outbox.enqueue must run inside transaction()")
    row = OutboxMessage.create(actor_name=actor_name, args=list(args), request_id=current_request_id())
    scope = transaction_scope()
    if "outbox_ids" not in scope:
        ids: list[int] = []
        scope["outbox_ids"] = ids
        on_commit(lambda: dispatch(ids))
    scope["outbox_ids"].append(row.id)
    return row


def dispatch(ids: list[int]) -> int:
    """Send the given rows now (after their commit); returns how many were sent. The rows are read
    back: one whose savepoint rolled back does not exist, and is not sent."""
    if not ids or _sender is None:
        return 0
    rows = list(OutboxMessage.select().where(OutboxMessage.id.in_(ids), OutboxMessage.sent_at.is_null()))
    sent = [row.id for row in rows if _hand_over(row)]
    _mark_sent(sent)
    return len(sent)


def _hand_over(row: OutboxMessage) -> bool:
    try:
        _sender(row)  # type: ignore[misc]
    except Exception as exc:
        log.warning(
            "outbox send failed; the sweeper will retry",
            extra={"fields": {"outboxId": row.id, "actor": row.actor_name, "error": str(exc)}},
        )
        OutboxMessage.update(attempts=OutboxMessage.attempts + 1, last_error=str(exc)[:2000]).where(
            OutboxMessage.id == row.id
        ).execute()
        return False
    return True


MARK_SENT = "UPDATE outbox_message SET sent_at = %s, attempts = attempts + 1 WHERE id = ANY(%s)"


def _mark_sent(ids: list[int]) -> None:
    """One statement for the rows handed over, whose commit does not wait for the disk: a mark a
    crash loses only makes the sweeper send the row again, which at-least-once actors tolerate.
    After a commit (no transaction open) it is one round trip to the server."""
    if not ids:
        return
    if in_transaction():  # the sweeper's transaction
        database.execute_sql("SET LOCAL synchronous_commit TO OFF")
        database.execute_sql(MARK_SENT, (clock.now(), ids))
        return
    database.execute_sql(f"BEGIN; SET LOCAL synchronous_commit TO OFF; {MARK_SENT}; COMMIT", (clock.now(), ids))


def sweep(*, older_than_seconds: int = 60, limit: int = 500) -> int:
    """Re-send rows left unsent for `older_than_seconds`; locked rows are left to another sweeper."""
    if _sender is None:
        return 0
    cutoff = clock.now() - timedelta(seconds=older_than_seconds)
    with transaction():
        rows = list(
            OutboxMessage.select()
            .where(OutboxMessage.sent_at.is_null(), OutboxMessage.created_at < cutoff)
            .order_by(OutboxMessage.id)
            .limit(limit)
            .for_update("FOR UPDATE SKIP LOCKED")
        )
        handed = [row.id for row in rows if _hand_over(row)]
        _mark_sent(handed)
        sent = len(handed)
    if rows:
        log.info("outbox sweep", extra={"fields": {"found": len(rows), "sent": sent}})
    return sent


def unsent_count() -> int:
    return OutboxMessage.select().where(OutboxMessage.sent_at.is_null()).count(database)
