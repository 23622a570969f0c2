"""`Idempotency-Key` (API.md): a request is done once per key; a replay answers what the first
one answered, with `idempotent: true`.

Keys are scoped per organization and route and kept 24 h. A request is fingerprinted (method, path
and canonical JSON body); the same key with another fingerprint is 422 `IDEMPOTENCY_KEY_REUSED`.

A request holding a key is one transaction (one commit), opened by `claim(key)`:

    with idempotency.claim(key) as claim:
        if claim.replay is not None:
            return claim.replay          # the request was done: its answer again
        ...                              # the work
        claim.store(answer)              # stored with the work's effects

The key is *held* first with a transaction-level advisory lock (`pg_try_advisory_xact_lock` on a
64-bit hash of scope, route and key), taken without waiting, so a concurrent request with that
key gets 409 `CONFLICT` instead of doing the work a second time; the key's record is read once
the lock is held (a stored answer is replayed). Effect and answer commit together and the lock
is released by that commit (or the rollback): a crash never leaves an effect without its stored
answer, nor a claim to wait for, and a request that fails stores nothing (the same key may be
retried: nothing was done).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

from psycopg2.extras import Json

from backend import clock
from backend.billing.errors import IdempotencyKeyReused
from backend.billing.models import IdempotencyRecord
from backend.db import database, transaction
from backend.errors import Conflict, ValidationError

TTL = timedelta(hours=24)
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
class Key:
    """A key in its scope, with the fingerprint of the request that presents it."""

    scope: str
    route: str
    key: str
    request_hash: str


def lock_id(scope: str, route: str, key: str) -> int:
    """The key's advisory lock: a signed 64-bit hash of scope, route and key."""
    digest = hashlib.blake2b(f"{scope}\x00{route}\x00{key}".encode(), digest_size=8, person=b"vitrine-idem").digest()
    return int.from_bytes(digest, "big", signed=True)


@dataclass(frozen=True)
class Claim:
    """A key held for the request's transaction. `replay`: the answer stored for it (the request
    was done: answer that again, `idempotent: true`); None: do the work and `store` its answer."""

    key: Key
    replay: dict | None

    def store(self, answer: dict) -> None:
        """`answer` stored as the key's completed one, over the record of an expired key if any."""
        now = clock.now()
        database.execute_sql(STORE, (self.key.scope, self.key.route, self.key.key, self.key.request_hash,
                                     Json(answer), now, now + TTL))


# The hot path of every request holding a key, one plain statement each: the record read once the
# key is held, the answer stored (over an expired record).
READ = ("SELECT request_hash, response_body, expires_at FROM billing_idempotency_record"
        " WHERE scope = %s AND route = %s AND key = %s")
STORE = (
    "INSERT INTO billing_idempotency_record (scope, route, key, request_hash, state, response_status,"
    " response_body, created_at, expires_at) VALUES (%s, %s, %s, %s, 'completed', 200, %s, %s, %s)"
    " ON CONFLICT (scope, route, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, state = EXCLUDED.state,"
    " response_status = EXCLUDED.response_status, response_body = EXCLUDED.response_body,"
    " created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at"
)


@contextmanager
def claim(key: Key) -> Iterator[Claim]:
    """The request's transaction with `key` held: 409 while another request holds it, 422 when
    it was used with another request. What the block writes commits with the stored answer, or
    nothing does (an exception rolls everything back, and the key is free again)."""
    with transaction():
        yield Claim(key, _hold(key))


def _hold(key: Key) -> dict | None:
    """Hold the key for this transaction (without waiting: 409 while another request holds it);
    its stored answer when it has one (None: do the work)."""
    lock = lock_id(key.scope, key.route, key.key)
    if not database.execute_sql("SELECT pg_try_advisory_xact_lock(%s)", (lock,)).fetchone()[0]:
        raise Conflict("a request with this Idempotency-Key is still in flight", reason="request_in_flight")
    # Read once the lock is held (another statement): sees whatever its last holder committed.
    record = database.execute_sql(READ, (key.scope, key.route, key.key)).fetchone()
    if record is None or record[2] <= clock.now():
        return None  # no record, or an expired one: the key is new again (`Claim.store` overwrites it)
    request_hash, response_body, _ = record
    if request_hash != key.request_hash:
        raise IdempotencyKeyReused("this Idempotency-Key was used with another request",
                                   reason="idempotency_key_reused")
    return response_body


def purge_expired() -> int:
    """Drop records past their 24 h (the clock runs it); returns how many."""
    with transaction():
        return IdempotencyRecord.delete().where(IdempotencyRecord.expires_at <= clock.now()).execute()
