"""`Idempotency-Key` (API.md): a request is done once per key; a replay answers what the first
one answered, with `idempotent: true`.

Keys are scoped per organization and route and kept 24 h. A request is fingerprinted (method, path
and canonical JSON body); the same key with another fingerprint is 422 `IDEMPOTENCY_KEY_REUSED`.

How it holds under concurrency, in one transaction (one commit per request): the key is first
*held* with a transaction-level advisory lock (`pg_try_advisory_xact_lock` on a 64-bit hash of
scope, route and key), taken without waiting, so a concurrent request with that key gets 409
`CONFLICT` instead of running the flow a second time; the key's record is read once the lock is
held (a completed one is replayed); the flow runs; its answer is stored (`completed`) in the same
transaction. Effect and answer commit together and the lock is released by that commit (or the
rollback): a crash never leaves an effect without its stored answer, nor a claim to wait for, and
a flow that fails stores nothing (the same key may be retried: nothing was done).

A flow whose last step must come after its answer is stored returns `Stored(answer, finish)`:
the answer is stored, then `finish(answer)` runs in the same transaction and its result is what
the caller gets (the collection stores its answer before it issues the invoice, so that nothing
but the invoice's own statement runs while the invoice series' counter row is locked). A flow
may store the answer itself, with its other writes in one statement (`STORE` with
`Key.store_params`), and say so with `Stored(..., stored=True)`.

`prepare` (optional) runs in that transaction before the flow; what it does is meant to outlast a
failing flow (the collection opens the financial record `reservation_total_due`): when the flow
fails, `prepare` runs again in a transaction of its own. With `prepare_in_flow`, the flow does
that work itself (the collection opens the record in its first read) and `prepare` runs only
alone, after a failing flow. A record left `in_flight` by the previous release (which committed a
claim first) is still honoured: 409 while fresh, taken over after `STALE_CLAIM_SECONDS`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from psycopg2.extras import Json

from backend import clock, prepared
from backend.billing.errors import IdempotencyKeyReused
from backend.billing.models import IdempotencyRecord
from backend.db import database, transaction
from backend.errors import Conflict, ValidationError

TTL = timedelta(hours=24)
STALE_CLAIM_SECONDS = 300
MAX_KEY_LENGTH = 255


def fingerprint(method: str, path: str, body: dict) -> str:
    canonical = json.dumps({"method": method.upper(), "path": path, "body": body}, sort_keys=True,
                           separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def check_key(key: str | None) -> str:
    """The header value, or 400 when absent or unusable."""
    key = (key or "").strip()
    if not key:
        raise ValidationError("the Idempotency-Key header is required", fields={"Idempotency-Key": ["required"]})
    if len(key) > MAX_KEY_LENGTH or not key.isprintable():
        raise ValidationError("the Idempotency-Key header must be at most 255 printable characters",
                              fields={"Idempotency-Key": ["invalid"]})
    return key


@dataclass(frozen=True)
class Stored:
    """What a flow returns to have `answer` stored before `finish(answer)` runs (see above);
    `stored`: the flow has stored it already (`STORE`, `Key.store_params`)."""

    answer: dict
    finish: Callable[[dict], dict]
    stored: bool = False


@dataclass(frozen=True)
class Key:
    """A key in its scope, with the fingerprint of the request that presents it."""

    scope: str
    route: str
    key: str
    request_hash: str

    def store_params(self, answer: dict) -> dict:
        """The values of `STORE` that store `answer` as the key's completed one (names start
        `idem_`), for `run_once` or a flow sending it as a part of its own statement."""
        now = clock.now()
        return {"idem_scope": self.scope, "idem_route": self.route, "idem_key": self.key,
                        "idem_hash": self.request_hash, "idem_body": Json(answer), "idem_now": now,
                        "idem_expires": now + TTL}


def lock_id(scope: str, route: str, key: str) -> int:
    """The key's advisory lock: a signed 64-bit hash of scope, route and key."""
    digest = hashlib.blake2b(f"{scope}\x00{route}\x00{key}".encode(), digest_size=8, person=b"vitrine-idem").digest()
    return int.from_bytes(digest, "big", signed=True)


def run_once(*, scope: str, route: str, key: str, request_hash: str, flow: Callable[[], dict | Stored],
             prepare: Callable[[], None] | None = None, prepare_in_flow: bool = False) -> tuple[dict, bool]:
    """`(answer, idempotent)`: the stored answer of a known key (True), else the answer `flow`
    gives, stored with the key in the flow's transaction (False). `prepare` runs before the flow
    in that transaction (unless `prepare_in_flow`: the flow does it), and again on its own when
    the flow fails (what it does stays)."""
    prepared = False
    try:
        with transaction():
            stored = _hold(scope, route, key, request_hash)
            if stored is not None:
                return stored, True
            if prepare is not None:
                if not prepare_in_flow:
                    prepare()
                prepared = True
            outcome = flow()
            answer = outcome.answer if isinstance(outcome, Stored) else outcome
            if not (isinstance(outcome, Stored) and outcome.stored):
                _store(Key(scope, route, key, request_hash), answer)
            if isinstance(outcome, Stored):
                answer = outcome.finish(answer)
    except Exception:
        if prepared:
            _prepare_alone(prepare)
        raise
    return answer, False


_LOCK = prepared.Statement("billing_idempotency_lock", "SELECT pg_try_advisory_xact_lock(%(lock)s)")
_READ = prepared.Statement("billing_idempotency_read", (
    "SELECT id, request_hash, state, response_body, created_at, expires_at FROM billing_idempotency_record"
    " WHERE scope = %(scope)s AND route = %(route)s AND key = %(key)s"))


def _hold(scope: str, route: str, key: str, request_hash: str) -> dict | None:
    """Hold the key for this transaction; its stored answer when it has one (None: run the flow)."""
    if not _LOCK.execute({"lock": lock_id(scope, route, key)}).fetchone()[0]:
        raise Conflict("a request with this Idempotency-Key is still in flight", reason="request_in_flight")
    # Read once the lock is held (another statement): sees whatever its last holder committed.
    row = _READ.execute({"scope": scope, "route": route, "key": key}).fetchone()
    if row is None:
        return None
    record_id, stored_hash, state, body, created_at, expires_at = row
    now = clock.now()
    if expires_at <= now:
        database.execute_sql("DELETE FROM billing_idempotency_record WHERE id = %s", (record_id,))
        return None
    if stored_hash != request_hash:
        raise IdempotencyKeyReused("this Idempotency-Key was used with another request",
                                   reason="idempotency_key_reused")
    if state == "completed":
        return body
    if (now - created_at).total_seconds() < STALE_CLAIM_SECONDS:  # a claim of the previous release
        raise Conflict("a request with this Idempotency-Key is still in flight", reason="request_in_flight")
    return None  # a claim abandoned by a crash: taken over (`_store` overwrites it)


# The key's answer stored (`completed`), over an abandoned claim of the previous release if any.
STORE = (
    "INSERT INTO billing_idempotency_record AS r (scope, route, key, request_hash, state, response_status,"
    " response_body, created_at, expires_at) VALUES (%(idem_scope)s, %(idem_route)s, %(idem_key)s, %(idem_hash)s,"
    " 'completed', 200, %(idem_body)s, %(idem_now)s, %(idem_expires)s)"
    " ON CONFLICT (scope, route, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, state = 'completed',"
    " response_status = 200, response_body = EXCLUDED.response_body, created_at = EXCLUDED.created_at,"
    " expires_at = EXCLUDED.expires_at"
)


def _store(key: Key, answer: dict) -> None:
    database.execute_sql(STORE, key.store_params(answer))


def _prepare_alone(prepare: Callable[[], None]) -> None:
    """`prepare` again, committed on its own, after the flow failed. Best effort: the original
    error is what the caller reports, and the next attempt prepares again anyway."""
    try:
        with transaction():
            prepare()
    except Exception:  # noqa: S110 - the flow's own error is raised by the caller
        pass


def purge_expired() -> int:
    """Drop records past their 24 h (the clock runs it); returns how many."""
    with transaction():
        return IdempotencyRecord.delete().where(IdempotencyRecord.expires_at <= clock.now()).execute()
