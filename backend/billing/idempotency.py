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
retried: nothing was done). A caller may hold and read the key with its own first statement, in
one round trip (`claim(key, read=...)`: the collection), and store the answer in a statement of
its own (`STORE` with `Key.store_values`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from peewee import DatabaseError
from psycopg2.extras import Json

from backend import clock, prepared
from backend.billing.errors import IdempotencyKeyReused
from backend.billing.models import IdempotencyRecord
from backend.db import database, sqlstate, transaction
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

    def store_values(self, answer: dict) -> dict:
        """The values of `STORE` that store `answer` as the key's completed one (names start
        `idem_`), for `Claim.store` or a statement of the caller's own."""
        now = clock.now()
        return STORE.values(idem_scope=self.scope, idem_route=self.route, idem_key=self.key,
                            idem_hash=self.request_hash, idem_body=Json(answer), idem_now=now, idem_expires=now + TTL)

    def read_values(self) -> dict:
        """The values of `HOLD` and `READ_JOIN` (a flow holding and reading the key itself,
        `claim(..., read=)`)."""
        return prepared.bind((HOLD, READ_JOIN), {
            "idem_scope": self.scope, "idem_route": self.route, "idem_key": self.key,
            "idem_lock": lock_id(self.scope, self.route, self.key)})


def lock_id(scope: str, route: str, key: str) -> int:
    """The key's advisory lock: a signed 64-bit hash of scope, route and key."""
    digest = hashlib.blake2b(f"{scope}\x00{route}\x00{key}".encode(), digest_size=8, person=b"vitrine-idem").digest()
    return int.from_bytes(digest, "big", signed=True)


@dataclass(frozen=True)
class Claim:
    """A key held for the request's transaction. `replay`: the answer stored for it (the request
    was done: answer that again, `idempotent: true`); None: do the work and store its answer
    (`store`, or `STORE` in a statement of the caller's own with `Key.store_values`). `row`: the
    row of the caller's first statement, when it read the key (`claim(..., read=)`)."""

    key: Key
    replay: dict | None
    row: Mapping[str, object] | None = None

    def store(self, answer: dict) -> None:
        database.execute_sql(STORE.sql, self.key.store_values(answer))


@contextmanager
def claim(key: Key, *, read: Callable[[], Mapping[str, object] | None] | None = None) -> Iterator[Claim]:
    """The request's transaction with `key` held: 409 while another request holds it, 422 when
    it was used with another request. What the block writes commits with the stored answer, or
    nothing does (an exception rolls everything back, and the key is free again).

    `read`: the caller's first statement, sent with `HOLD` before it in the same round trip and
    joining the key's record (`READ_JOIN`, `READ_COLUMNS`); its row is `claim.row` (None: no
    row, so no stored answer either)."""
    with transaction():
        if read is None:
            yield Claim(key, _hold(key))
            return
        try:
            row = read()
        except DatabaseError as exc:
            if sqlstate(exc) == _HELD_ELSEWHERE:
                raise _in_flight() from None
            raise
        stored = None
        if row is not None and row["key_hash"] is not None:
            stored = tuple(row[column] for column in _READ_NAMES)
        yield Claim(key, _stored_answer(key.request_hash, stored, clock.now()), row)


_LOCK = prepared.Statement("billing_idempotency_lock", "SELECT pg_try_advisory_xact_lock(%(lock)s)")
# The key held by a statement that fails (lock_not_available) when another request holds it
# (migration 102), for a caller sending it before its own read (`claim(..., read=)`, `Key.read_values`).
HOLD = prepared.Fragment("SELECT billing_hold_idempotency_key(%(idem_lock)s)")
_HELD_ELSEWHERE = "55P03"
_READ_NAMES = ("key_hash", "key_body", "key_expires_at")
# What a statement reading the key itself selects and joins (`claim(..., read=)`, `Key.read_values`).
READ_COLUMNS = prepared.Fragment("k.request_hash AS key_hash, k.response_body AS key_body,"
                                  " k.expires_at AS key_expires_at")
READ_JOIN = prepared.Fragment("LEFT JOIN billing_idempotency_record k ON k.scope = %(idem_scope)s"
                               " AND k.route = %(idem_route)s AND k.key = %(idem_key)s")
_READ = prepared.Statement("billing_idempotency_read", (
    "SELECT request_hash, response_body, expires_at, id FROM billing_idempotency_record"
    " WHERE scope = %(scope)s AND route = %(route)s AND key = %(key)s"))


def _in_flight() -> Conflict:
    return Conflict("a request with this Idempotency-Key is still in flight", reason="request_in_flight")


def _hold(key: Key) -> dict | None:
    """Hold the key for this transaction (without waiting: 409 while another request holds it);
    its stored answer when it has one (None: do the work)."""
    if not _LOCK.execute({"lock": lock_id(key.scope, key.route, key.key)}).fetchone()[0]:
        raise _in_flight()
    # Read once the lock is held (another statement): sees whatever its last holder committed.
    row = _READ.execute({"scope": key.scope, "route": key.route, "key": key.key}).fetchone()
    now = clock.now()
    if row is not None and row[2] <= now:  # expired: the key is new again
        database.execute_sql("DELETE FROM billing_idempotency_record WHERE id = %s", (row[3],))
        return None
    return _stored_answer(key.request_hash, row[:3] if row is not None else None, now)


def _stored_answer(request_hash: str, row: tuple | None, now: datetime) -> dict | None:
    """The answer to replay from the key's record `(request_hash, response_body, expires_at)`,
    or None when the work is to be done (no record, or an expired one); 422 for another request."""
    if row is None:
        return None
    stored_hash, body, expires_at = row
    if expires_at <= now:
        return None  # the key is new again (`STORE` overwrites the record)
    if stored_hash != request_hash:
        raise IdempotencyKeyReused("this Idempotency-Key was used with another request",
                                   reason="idempotency_key_reused")
    return body


# The key's answer stored (`completed`), over the record of an expired key if any.
STORE = prepared.Fragment(
    "INSERT INTO billing_idempotency_record AS r (scope, route, key, request_hash, state, response_status,"
    " response_body, created_at, expires_at) VALUES (%(idem_scope)s, %(idem_route)s, %(idem_key)s, %(idem_hash)s,"
    " 'completed', 200, %(idem_body)s, %(idem_now)s, %(idem_expires)s)"
    " ON CONFLICT (scope, route, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, state = 'completed',"
    " response_status = 200, response_body = EXCLUDED.response_body, created_at = EXCLUDED.created_at,"
    " expires_at = EXCLUDED.expires_at"
)



def purge_expired() -> int:
    """Drop records past their 24 h (the clock runs it); returns how many."""
    with transaction():
        return IdempotencyRecord.delete().where(IdempotencyRecord.expires_at <= clock.now()).execute()
