"""Polling (Specification C): a pass loads up to `PASS_SIZE` transmissions in `sent` or
`dispatching`, the least recently synced first, and resyncs each; an error on one is counted and
logged, never propagated, and the pass goes on. A `dispatching` one is taken only once its claim
has expired (its worker died): it is dispatched again, which searches the operator first.

API.md, "Intervals in milliseconds": a periodiq job runs every minute and starts a pass only when
`EINVOICING_POLLING_INTERVAL_MS` (less `SCHEDULE_SLACK`, the minute job's jitter) has elapsed
since the start of the last pass recorded in `einvoicing_polling_pass`. At most one pass runs at a
time, across clocks and workers: the decision is taken under a transaction-level advisory lock,
and a unique partial index admits one `running` row. A pass left `running` for longer than
`ABANDONED_AFTER` (its worker died) is closed as `abandoned` by the next decision.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

from backend import clock
from backend.db import database, transaction
from backend.einvoicing import lifecycle
from backend.einvoicing.models import PollingPass, Transmission
from backend.einvoicing.operator_client import OperatorClient
from backend.einvoicing.status import TransmissionStatus
from backend.logs import log_event
from storage import Storage

PASS_SIZE = 50
ABANDONED_AFTER = timedelta(minutes=30)
# The minute job fires a little early or late; without slack, a pass due every 60 s would start
# every other minute (59.9 s after the last one is "not yet").
SCHEDULE_SLACK = timedelta(seconds=5)
_LOCK_KEY = 0x45494E56  # "EINV"

S = TransmissionStatus


def start_pass_if_due(interval_ms: int) -> PollingPass | None:
    """Record and return a new running pass when the interval has elapsed since the last one
    started and no pass is running; else None."""
    now = clock.now()
    with transaction():
        database.execute_sql("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        PollingPass.update(outcome="abandoned", finished_at=now).where(
            PollingPass.outcome == "running", PollingPass.started_at < now - ABANDONED_AFTER).execute()
        last = PollingPass.select().order_by(PollingPass.started_at.desc()).first()
        interval = max(timedelta(milliseconds=interval_ms) - SCHEDULE_SLACK, timedelta(0))
        if last is not None and (last.outcome == "running" or now - last.started_at < interval):
            return None
        return PollingPass.create(started_at=now)


def run_pass(polling_pass: PollingPass, *, client: OperatorClient, storage: Storage,
             test_mode: bool = False) -> dict[str, int]:
    """Resync up to `PASS_SIZE` in-flight transmissions; returns (and records, and logs) the counters."""
    # A `dispatching` transmission whose claim is fresh is being posted by its worker: asking the
    # operator about it now would only cost a call. One whose claim expired is dispatched again.
    stale_claim = clock.now() - lifecycle.DISPATCH_LEASE
    ids = [row.id for row in Transmission.select(Transmission.id)
           .where((Transmission.status == S.SENT)
                  | ((Transmission.status == S.DISPATCHING) & (Transmission.dispatch_claimed_at < stale_claim)))
           .order_by(Transmission.last_synced_at.asc(nulls="first"), Transmission.created_at)
           .limit(PASS_SIZE)]
    counters: Counter[str] = Counter(loaded=len(ids))
    for transmission_id in ids:
        try:
            before = Transmission.get_by_id(transmission_id)
            if before.status == S.DISPATCHING:
                # Its dispatcher died: dispatch again (it searches the operator before posting).
                after = lifecycle.dispatch(transmission_id, client=client, storage=storage, test_mode=test_mode,
                                           sources=(), trigger="poll")
            else:
                after = lifecycle.resync(transmission_id, client=client, trigger="poll")
            counters[_outcome(before.status, after.status)] += 1
        except Exception as exc:  # one transmission's error never breaks the pass
            counters["errors"] += 1
            log_event("einvoicing.polling.error", "resync failed", level="warn", transmissionId=transmission_id,
                      error=f"{type(exc).__name__}: {exc}"[:500])
    finished = {key: counters[key] for key in ("loaded", "acknowledged", "rejected", "sent", "unchanged", "failed",
                                               "errors")}
    with transaction():
        PollingPass.update(outcome="completed", finished_at=clock.now(), **finished).where(
            PollingPass.id == polling_pass.id).execute()
    log_event("einvoicing.polling.pass", "polling pass finished", passId=polling_pass.id, **finished)
    return finished


def poll_if_due(*, interval_ms: int, client: OperatorClient, storage: Storage,
                test_mode: bool = False) -> dict[str, int] | None:
    """The periodic job's body: a pass when one is due, else None."""
    polling_pass = start_pass_if_due(interval_ms)
    if polling_pass is None:
        return None
    try:
        return run_pass(polling_pass, client=client, storage=storage, test_mode=test_mode)
    except BaseException:
        with transaction():
            PollingPass.update(outcome="abandoned", finished_at=clock.now()).where(
                PollingPass.id == polling_pass.id, PollingPass.outcome == "running").execute()
        raise


def _outcome(before: str, after: str) -> str:
    if after == before:
        return "unchanged"
    return {S.ACKNOWLEDGED: "acknowledged", S.REJECTED: "rejected", S.SENT: "sent", S.FAILED: "failed"}.get(
        after, "unchanged")
