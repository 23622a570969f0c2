"""Knowing when the broker's Redis lost data, and handing its work over again at once.

The platform writes a marker into the broker's Redis (`<namespace>:vitrine-epoch`: a random token
and the Redis run id it was written on) and keeps the same token in PostgreSQL
(`outbox_broker_epoch`, a row per broker namespace). `EpochWatch.check()` compares them; the
clock's sweeper calls it every minute, each worker process's epoch check (`actors.broker.EpochCheck`)
every few seconds, and every process's hand-over thread when a new Redis connection was opened (the
connection came back). Verdicts:

- marker and run id as this process last saw them: nothing to do (one round trip, no SQL);
- same token, another run id, append-only file on: Redis restarted and reloaded its data: the
  marker is written again with the new run id, nothing is re-sent;
- marker missing (FLUSHALL, a restart without persistence, eviction), another token (another
  Redis, a restored database), or another run id on a Redis that persists by snapshots only
  (the messages since the last snapshot are gone): the queues may be lost, so every outbox row
  handed over but not done is handed over again at once (`outbox.hand_over_again`), the loss is
  recorded (`outbox_broker_loss`, counted by `/api/metrics`) and logged as
  `outbox.redis_data_lost` with the counts, then the marker is written again.

Rows whose hand-over failed while Redis was away go at once on any verdict but the first one.
The decision is taken under a transaction-level advisory lock, so one process re-sends and the
others then find the new marker; a process that dies before committing leaves the old token in
PostgreSQL, and the next check re-sends again (actors are idempotent). Rows still queued in a
healthy Redis are never re-sent here: the regular `redeliver_at` rule stays for messages a
healthy Redis lost (a worker's death).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import threading
from dataclasses import dataclass

from backend import clock, outbox
from backend.db import database, transaction
from backend.logs import log_event

_LOCK_KEY = 0x45504F43  # "EPOC"
LOSS_REASONS = ("marker_missing", "other_epoch", "restarted_from_snapshot")


@dataclass(frozen=True)
class RedisState:
    token: str | None  # the marker's token, None when the marker is missing
    marker_run_id: str | None  # the run id the marker was written on
    run_id: str  # the server's run id now
    append_only: bool  # the server persists every write (AOF), not only snapshots

    @property
    def seen(self) -> tuple[str | None, str | None]:
        return self.token, self.marker_run_id


@dataclass(frozen=True)
class Loss:
    reason: str
    redelivered: int  # rows handed over but not done, handed over again
    unsent: int  # rows whose hand-over had failed, handed over now


def verdict(known_token: str | None, state: RedisState) -> str:
    """`first` (no epoch known yet), `intact`, `restarted` (data reloaded) or a loss reason."""
    if known_token is None:
        return "first"
    if state.token is None:
        return "marker_missing"
    if state.token != known_token:
        return "other_epoch"
    if state.marker_run_id == state.run_id:
        return "intact"
    return "restarted" if state.append_only else "restarted_from_snapshot"


class EpochWatch:
    """One process's watch over the broker's Redis (`client`, keys under `namespace`)."""

    def __init__(self, client, namespace: str) -> None:
        self.client, self.namespace, self.key = client, namespace, f"{namespace}:vitrine-epoch"
        self._seen: tuple[str | None, str | None] | None = None
        self._lock = threading.Lock()
        self._settling = threading.local()  # the re-send's own hand-overs do not check again

    def read(self) -> RedisState:
        raw = self.client.get(self.key)
        info = self.client.info()  # the default sections: server (run id) and persistence among them
        marker = json.loads(raw) if raw else {}
        return RedisState(marker.get("token"), marker.get("runId"), str(info["run_id"]),
                          bool(int(info.get("aof_enabled", 0))))

    def check(self) -> Loss | None:
        """Compare the marker with what this process last saw; settle a difference (see the module)."""
        if getattr(self._settling, "active", False):
            return None
        state = self.read()
        if self._seen == state.seen and state.marker_run_id == state.run_id:
            return None
        with self._lock:
            self._settling.active = True
            try:
                return self._settle()
            finally:
                self._settling.active = False

    def _settle(self) -> Loss | None:
        written: tuple[str, Loss | None, int] | None = None
        with transaction():
            database.execute_sql("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
            state = self.read()  # again: another process may have settled it while this one waited
            known = database.execute_sql("SELECT token FROM outbox_broker_epoch WHERE namespace = %s",
                                         (self.namespace,)).fetchone()
            found = verdict(known[0] if known else None, state)
            loss = None
            if found != "intact":
                redelivered, unsent = outbox.hand_over_again(lost=found in LOSS_REASONS) if known else (0, 0)
                if found in LOSS_REASONS:
                    loss = Loss(found, redelivered, unsent)
                    database.execute_sql(
                        "INSERT INTO outbox_broker_loss (detected_at, reason, namespace, redis_run_id, redelivered,"
                        " unsent_resent, detected_by) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                        (clock.now(), found, self.namespace, state.run_id, redelivered, unsent, _process_name()))
                token = state.token if found == "restarted" else secrets.token_hex(16)
                self.client.set(self.key, json.dumps({"token": token, "runId": state.run_id}))
                database.execute_sql(
                    "INSERT INTO outbox_broker_epoch (namespace, token, redis_run_id, written_at)"
                    " VALUES (%s, %s, %s, %s) ON CONFLICT (namespace) DO UPDATE SET token = EXCLUDED.token,"
                    " redis_run_id = EXCLUDED.redis_run_id, written_at = EXCLUDED.written_at",
                    (self.namespace, token, state.run_id, clock.now()))
                state = RedisState(token, state.run_id, state.run_id, state.append_only)
                written = (found, loss, unsent)
        self._seen = state.seen
        if written is not None:  # once committed
            _report(*written)
        return loss


def _report(found: str, loss: Loss | None, unsent: int) -> None:
    if loss is not None:
        log_event("outbox.redis_data_lost", "the broker's Redis lost data; its work was handed over again", "error",
                  reason=loss.reason, redelivered=loss.redelivered, unsentResent=loss.unsent)
    else:
        log_event("outbox.broker_epoch", "broker epoch marker written", verdict=found, unsentResent=unsent)


def _process_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"[:120]


def losses() -> int:
    """How many times the broker's Redis was found to have lost data (`/api/metrics`)."""
    return database.execute_sql("SELECT count(*) FROM outbox_broker_loss").fetchone()[0]
