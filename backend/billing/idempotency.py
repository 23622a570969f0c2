"""`Idempotency-Key` (API.md): a request is done once per key; a replay answers what the first
one answered, with `idempotent: true`.

Keys are scoped per organization and route and kept 24 h. A request is fingerprinted (method, path
and canonical JSON body); the same key with another fingerprint is 422 `IDEMPOTENCY_KEY_REUSED`.

How it holds under concurrency: the key is first *claimed* in a short transaction of its own
(`in_flight`, committed at once), so a concurrent request with that key finds the claim and gets
409 `CONFLICT` instead of running the flow a second time. The flow then runs in its own
transaction, which also stores the answer (`completed`): effect and answer commit together, so a
crash can never leave an effect without its stored answer. A flow that fails releases its claim
(the same key may be retried: nothing was done); a claim left `in_flight` by a crashed process is
taken over after `STALE_CLAIM_SECONDS`, which is safe because a committed flow would have
completed it in the same transaction.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import timedelta

from peewee import IntegrityError

from backend import clock
from backend.billing.errors import IdempotencyKeyReused
from backend.billing.models import IdempotencyRecord
from backend.db import transaction
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


def run_once(*, scope: str, route: str, key: str, request_hash: str, flow: Callable[[], dict],
             prepare: Callable[[], None] | None = None) -> tuple[dict, bool]:
    """`(answer, idempotent)`: the stored answer of a known key (True), else the answer `flow`
    gives, stored with the key in the flow's transaction (False). `prepare` runs once the key is
    claimed, before the flow and outside its transaction (what it commits stays if the flow fails)."""
    stored = _claim(scope, route, key, request_hash)
    if stored is not None:
        return stored, True
    try:
        if prepare is not None:
            prepare()
        with transaction():
            answer = flow()
            (IdempotencyRecord.update(state="completed", response_status=200, response_body=answer)
             .where(IdempotencyRecord.scope == scope, IdempotencyRecord.route == route,
                    IdempotencyRecord.key == key).execute())
    except BaseException:
        _release(scope, route, key)
        raise
    return answer, False


def _claim(scope: str, route: str, key: str, request_hash: str) -> dict | None:
    now = clock.now()
    where = (IdempotencyRecord.scope == scope, IdempotencyRecord.route == route, IdempotencyRecord.key == key)
    with transaction():
        record = IdempotencyRecord.select().where(*where).for_update().first()
        if record is not None and record.expires_at <= now:
            IdempotencyRecord.delete().where(IdempotencyRecord.id == record.id).execute()
            record = None
        if record is not None:
            if record.request_hash != request_hash:
                raise IdempotencyKeyReused("this Idempotency-Key was used with another request",
                                           reason="idempotency_key_reused")
            if record.state == "completed":
                return record.response_body
            if (now - record.created_at).total_seconds() < STALE_CLAIM_SECONDS:
                raise Conflict("a request with this Idempotency-Key is still in flight", reason="request_in_flight")
            IdempotencyRecord.update(created_at=now).where(IdempotencyRecord.id == record.id).execute()
            return None  # taken over: its owner never committed
        try:
            with transaction():
                IdempotencyRecord.insert(scope=scope, route=route, key=key, request_hash=request_hash,
                                         state="in_flight", created_at=now, expires_at=now + TTL).execute()
        except IntegrityError:
            raise Conflict("a request with this Idempotency-Key is still in flight",
                           reason="request_in_flight") from None
    return None


def _release(scope: str, route: str, key: str) -> None:
    with transaction():
        (IdempotencyRecord.delete()
         .where(IdempotencyRecord.scope == scope, IdempotencyRecord.route == route, IdempotencyRecord.key == key,
                IdempotencyRecord.state == "in_flight").execute())


def purge_expired() -> int:
    """Drop records past their 24 h (the clock runs it); returns how many."""
    with transaction():
        return IdempotencyRecord.delete().where(IdempotencyRecord.expires_at <= clock.now()).execute()
