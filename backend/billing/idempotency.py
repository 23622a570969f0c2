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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from psycopg2.extras import Json

from backend import clock, prepared
from backend.billing.errors import IdempotencyKeyReused
from backend.billing.models import IdempotencyRecord
from backend.db import database, sqlstate, transaction
from backend.errors import Conflict, DomainError, ValidationError

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
        return {**self.read_params(), "idem_hash": self.request_hash, "idem_body": Json(answer), "idem_now": now,
                "idem_expires": now + TTL}

    def read_params(self) -> dict:
        """The values of `HOLD` and `READ_JOIN` (a flow holding and reading the key itself,
        `run_once(read_in_flow=True)`)."""
        return {"idem_scope": self.scope, "idem_route": self.route, "idem_key": self.key,
                "idem_lock": lock_id(self.scope, self.route, self.key)}

    def check_hold(self, exc: BaseException) -> None:
        """On an error of the flow's statement that sent `HOLD`: ends the flow with 409 when it
        is the key's hold that failed (another request holds the key); else returns."""
        if sqlstate(exc) == _HELD_ELSEWHERE:
            raise _Decided(refusal=_in_flight()) from None

    def check_read(self, row: Mapping[str, object]) -> None:
        """In a flow run with `read_in_flow`, on its row read with `READ_COLUMNS` and `READ_JOIN`:
        returns when the flow is to run; else ends the flow, rolled back, with the stored answer
        (replayed by `run_once`) or the key's refusal (422, 409)."""
        try:
            answer = _stored_answer(self.request_hash, None if row["key_state"] is None else
                                    tuple(row[column] for column in _READ_NAMES), clock.now())
        except DomainError as refused:
            raise _Decided(refusal=refused) from None
        if answer is not None:
            raise _Decided(answer=answer)


class _Decided(Exception):  # not an error: how a flow hands the key's outcome to `run_once`
    def __init__(self, *, answer: dict | None = None, refusal: DomainError | None = None) -> None:
        super().__init__()
        self.answer, self.refusal = answer, refusal


def lock_id(scope: str, route: str, key: str) -> int:
    """The key's advisory lock: a signed 64-bit hash of scope, route and key."""
    digest = hashlib.blake2b(f"{scope}\x00{route}\x00{key}".encode(), digest_size=8, person=b"vitrine-idem").digest()
    return int.from_bytes(digest, "big", signed=True)


def run_once(*, scope: str, route: str, key: str, request_hash: str, flow: Callable[[], dict | Stored],
             prepare: Callable[[], None] | None = None, prepare_in_flow: bool = False,
             read_in_flow: bool = False) -> tuple[dict, bool]:
    """`(answer, idempotent)`: the stored answer of a known key (True), else the answer `flow`
    gives, stored with the key in the flow's transaction (False). `prepare` runs before the flow
    in that transaction (unless `prepare_in_flow`: the flow does it), and again on its own when
    the flow fails (what it does stays). With `read_in_flow`, the flow holds and reads the key
    itself, before anything else: its first round trip sends `HOLD` then its read, which joins
    the key's record to its own rows (`READ_COLUMNS`, `READ_JOIN`; a later statement than the
    hold's, so it sees what the key's last holder committed); an error of that round trip goes
    to `Key.check_hold`, the row to `Key.check_read`."""
    prepared = False
    try:
        with transaction():
            if not read_in_flow:
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
    except _Decided as decided:  # by the flow's read (`read_in_flow`), its transaction rolled back
        if decided.refusal is not None:
            raise decided.refusal from None
        return decided.answer, True
    except Exception:
        if prepared:
            _prepare_alone(prepare)
        raise
    return answer, False


_LOCK = prepared.Statement("billing_idempotency_lock", "SELECT pg_try_advisory_xact_lock(%(lock)s)")
# The key held by a statement that fails (lock_not_available) when another request holds it
# (migration 102), for a flow sending it with its read (`Key.read_params`, `Key.check_hold`).
HOLD = "SELECT billing_hold_idempotency_key(%(idem_lock)s)"
_HELD_ELSEWHERE = "55P03"
_READ_NAMES = ("key_hash", "key_state", "key_body", "key_created_at", "key_expires_at")
# What a flow reading the key itself adds to its statement (with `Key.read_params`).
READ_COLUMNS = ("k.request_hash AS key_hash, k.state AS key_state, k.response_body AS key_body,"
                " k.created_at AS key_created_at, k.expires_at AS key_expires_at")
READ_JOIN = ("LEFT JOIN billing_idempotency_record k ON k.scope = %(idem_scope)s AND k.route = %(idem_route)s"
             " AND k.key = %(idem_key)s")
_READ = prepared.Statement("billing_idempotency_read", (
    "SELECT request_hash, state, response_body, created_at, expires_at, id FROM billing_idempotency_record"
    " WHERE scope = %(scope)s AND route = %(route)s AND key = %(key)s"))


def _in_flight() -> Conflict:
    return Conflict("a request with this Idempotency-Key is still in flight", reason="request_in_flight")


def _hold(scope: str, route: str, key: str, request_hash: str) -> dict | None:
    """Hold the key for this transaction (without waiting: 409 while another request holds it);
    its stored answer when it has one (None: run the flow)."""
    if not _LOCK.execute({"lock": lock_id(scope, route, key)}).fetchone()[0]:
        raise _in_flight()
    # Read once the lock is held (another statement): sees whatever its last holder committed.
    row = _READ.execute({"scope": scope, "route": route, "key": key}).fetchone()
    now = clock.now()
    if row is not None and row[4] <= now:  # expired: the key is new again
        database.execute_sql("DELETE FROM billing_idempotency_record WHERE id = %s", (row[5],))
        return None
    return _stored_answer(request_hash, row[:5] if row is not None else None, now)


def _stored_answer(request_hash: str, row: tuple | None, now: datetime) -> dict | None:
    """The answer to replay from the key's record `(request_hash, state, response_body,
    created_at, expires_at)`, or None when the flow is to run (no record, an expired one, a claim
    abandoned by a crash); 422 for another request, 409 for a claim still fresh."""
    if row is None:
        return None
    stored_hash, state, body, created_at, expires_at = row
    if expires_at <= now:
        return None  # the key is new again (`STORE` overwrites the record)
    if stored_hash != request_hash:
        raise IdempotencyKeyReused("this Idempotency-Key was used with another request",
                                   reason="idempotency_key_reused")
    if state == "completed":
        return body
    if (now - created_at).total_seconds() < STALE_CLAIM_SECONDS:  # a claim of the previous release
        raise _in_flight()
    return None  # a claim abandoned by a crash: taken over (`STORE` overwrites it)


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
