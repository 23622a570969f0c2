"""Polling (Specification C), incremental.

A pass asks the operator what changed, not each transmission where it stands: one search per page
of the flows updated since the last pass (`updatedAfter` = the latest `updatedAt` the last complete
search saw, on the operator's clock, less `OPERATOR_LAG`; never later than the oldest open
transmission's creation less `CLOCK_OVERLAP`, our clock against theirs). The client pages as its
API does (`changed_pages`: offsets in submission order for the spec's operator, `updatedAfter` for
an XP Z12-013 platform), one search per page. On each page the flows are matched to transmissions
by flow id in one query; `Ok`/`Archived` acknowledge the `sent` ones in one statement, `Error` rejects,
and every lifecycle status reported is stored once (`reform_statuses.record`). Polling keeps up with
any number of open transmissions in ceil(changed flows / 100) searches. When no transmission is
open (`sent` or `acknowledged`), the pass makes no call.

A pass also records and sends the platform's 212s (`payment_reports`) and the 205s and 210s of
self-billed invoices (`decision_reports`). Besides, it dispatches
again up to `PASS_SIZE` transmissions whose automatic retry is due (`failed` with
`next_dispatch_at` passed: a throttled or unavailable operator) and up to `PASS_SIZE`
`dispatching` ones whose claim expired (their worker died; the dispatch searches the operator
first). An error on one of those is counted and logged, never propagated, and its
`last_synced_at` moves, so a few broken transmissions never hold the others back. The admin's
resync still asks the operator about one transmission (`lifecycle.resync`). A platform's callback
(`afnor_callbacks`) applies its flow through `apply_flows`, the code a search page goes through;
polling stays the safety net for a callback lost.

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

from peewee import fn

from backend import clock
from backend.db import database, transaction
from backend.einvoicing import decision_reports, lifecycle, payment_reports, reform_statuses
from backend.einvoicing.models import PollingPass, Transmission
from backend.einvoicing.operator_client import Flow, OperatorClient
from backend.einvoicing.status import OperatorStatus, TransmissionStatus
from backend.logs import log_event
from storage import Storage

PASS_SIZE = 50  # retries due, and expired claims, dispatched again per pass (each)
CLOCK_OVERLAP = timedelta(minutes=1)  # our clock against the operator's: changes seen twice, none missed
OPERATOR_LAG = timedelta(seconds=5)  # a change the operator registers a little after its `updatedAt`
COUNTERS = ("loaded", "acknowledged", "rejected", "sent", "unchanged", "failed", "errors", "searches", "lifecycle")
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
    """Retries due, expired claims, then the incremental search; returns (and records, and logs)
    the counters."""
    counters: Counter[str] = Counter()
    _dispatch_again(counters, client=client, storage=storage, test_mode=test_mode)
    updated_after = _search_changes(polling_pass, counters, client=client)
    reports = _payment_reports(client)
    decisions = _decision_reports(client)
    finished = {key: counters[key] for key in COUNTERS}
    with transaction():
        PollingPass.update(outcome="completed", finished_at=clock.now(), updated_after=updated_after,
                           **finished).where(PollingPass.id == polling_pass.id).execute()
    log_event("einvoicing.polling.pass", "polling pass finished", passId=polling_pass.id,
              updatedAfter=clock.iso(updated_after) if updated_after else None, paymentReports=reports,
              decisionReports=decisions, **finished)
    return finished


def _payment_reports(client: OperatorClient) -> dict[str, int]:
    """The 212s of payments made since the last pass, recorded then sent (their errors logged)."""
    try:
        recorded = payment_reports.sweep()
        return {"recorded": recorded, **payment_reports.send_due(client=client)}
    except Exception as exc:
        log_event("einvoicing.polling.error", "payment reports failed", level="warn",
                  error=f"{type(exc).__name__}: {exc}"[:500])
        return {"recorded": 0, "sent": 0, "failed": 0}


def _decision_reports(client: OperatorClient) -> dict[str, int]:
    """The 205s and 210s of self-billed invoices (`decision_reports`), sent (their errors logged)."""
    try:
        return decision_reports.send_due(client=client)
    except Exception as exc:
        log_event("einvoicing.polling.error", "decision reports failed", level="warn",
                  error=f"{type(exc).__name__}: {exc}"[:500])
        return {"sent": 0, "failed": 0}


def _dispatch_again(counters: Counter[str], *, client: OperatorClient, storage: Storage, test_mode: bool) -> None:
    now = clock.now()
    due = [row.id for row in Transmission.select(Transmission.id)
           .where(Transmission.status == S.FAILED, Transmission.next_dispatch_at <= now)
           .order_by(Transmission.next_dispatch_at).limit(PASS_SIZE)]
    # A `dispatching` transmission whose claim is fresh is being posted by its worker; one whose
    # claim expired is dispatched again (it searches the operator before posting).
    stale = [row.id for row in Transmission.select(Transmission.id)
             .where(Transmission.status == S.DISPATCHING,
                    Transmission.dispatch_claimed_at < now - lifecycle.DISPATCH_LEASE)
             .order_by(Transmission.last_synced_at.asc(nulls="first"), Transmission.created_at)
             .limit(PASS_SIZE)]
    for transmission_id, sources, trigger in [*((i, (S.FAILED,), "auto_retry") for i in due),
                                              *((i, (), "poll") for i in stale)]:
        counters["loaded"] += 1
        try:
            before = Transmission.get_by_id(transmission_id)
            after = lifecycle.dispatch(transmission_id, client=client, storage=storage, test_mode=test_mode,
                                       sources=sources, trigger=trigger)
            counters[_outcome(before.status, after.status)] += 1
        except Exception as exc:  # one transmission's error never breaks the pass, nor blocks the next
            counters["errors"] += 1
            Transmission.update(last_synced_at=clock.now()).where(Transmission.id == transmission_id).execute()
            log_event("einvoicing.polling.error", "dispatch again failed", level="warn",
                      transmissionId=transmission_id, error=f"{type(exc).__name__}: {exc}"[:500])


def _search_changes(polling_pass: PollingPass, counters: Counter[str], *, client: OperatorClient):
    """Page through the flows changed since the last complete search; returns the latest
    `updatedAt` seen (the operator's clock: the next search's starting point), the previous one
    when nothing changed, or None when the search did not complete."""
    last = (PollingPass.select(PollingPass.updated_after)
            .where(PollingPass.outcome == "completed", PollingPass.updated_after.is_null(False))
            .order_by(PollingPass.started_at.desc()).first())
    watermark = last.updated_after if last else None
    open_since = (Transmission.select(fn.MIN(Transmission.created_at))
                  .where(Transmission.status.in_([S.SENT, S.ACKNOWLEDGED])).scalar())
    if open_since is None:
        return watermark  # nothing to follow
    # A flow is submitted after its transmission is created (our clock, hence CLOCK_OVERLAP);
    # the operator registers changes in about its `updatedAt` order (hence OPERATOR_LAG).
    since = open_since - CLOCK_OVERLAP
    if watermark is not None:
        since = max(since, watermark - OPERATOR_LAG)
    updated_after = clock.iso(since)
    latest = watermark
    pages = client.changed_pages(updated_after=updated_after)
    while True:
        try:
            flows = next(pages, None)
        except Exception as exc:
            counters["errors"] += 1
            log_event("einvoicing.polling.error", "search of changed flows failed", level="warn",
                      updatedAfter=updated_after, error=f"{type(exc).__name__}: {exc}"[:500])
            return None
        if flows is None:
            return latest
        counters["searches"] += 1
        apply_flows(flows, counters)
        for flow in flows:
            changed = reform_statuses.parse_at(str(flow.answer.get("updatedAt") or ""))
            if changed is not None and (latest is None or changed > latest):
                latest = changed


def apply_flows(flows: list[Flow], counters: Counter[str], *, trigger: str = "poll") -> None:
    """What the platform says of these flows, applied to their transmissions (matched by flow id
    in one query): a search page's, or a callback's flow read again (`afnor_callbacks`). Every
    move is conditional, so a flow applied twice moves nothing the second time."""
    by_flow = {flow.flow_id: flow for flow in flows}
    if not by_flow:
        return
    transmissions = list(Transmission.select(Transmission.id, Transmission.status, Transmission.provider_flow_id)
                         .where(Transmission.provider_flow_id.in_(list(by_flow))))
    counters["loaded"] += len(transmissions)
    with transaction():
        counters["lifecycle"] += reform_statuses.record(
            (t.id, status) for t in transmissions for status in by_flow[t.provider_flow_id].lifecycle)
    acknowledging = [(t.provider_flow_id, by_flow[t.provider_flow_id].status) for t in transmissions
                     if t.status == S.SENT and by_flow[t.provider_flow_id].status in lifecycle.ACKNOWLEDGING]
    counters["acknowledged"] += _acknowledge(acknowledging, trigger=trigger)
    for t in transmissions:
        flow = by_flow[t.provider_flow_id]
        if t.status == S.SENT and flow.status == OperatorStatus.ERROR:
            after = lifecycle.apply_flow_status(t, flow, trigger=trigger)
            counters[_outcome(S.SENT, after.status)] += 1
        elif t.status == S.SENT and flow.status not in lifecycle.ACKNOWLEDGING:
            counters["unchanged"] += 1


def _acknowledge(rows: list[tuple[str, str]], *, trigger: str) -> int:
    """`sent` -> `acknowledged` for these (flow id, operator status) pairs, in one statement (the
    history trigger writes a row for each)."""
    if not rows:
        return 0
    now = clock.now()
    placeholders = ", ".join(["(%s, %s)"] * len(rows))
    with transaction():
        database.execute_sql("SELECT set_config('vitrine.einvoice_trigger', %s, true), "
                             "set_config('vitrine.einvoice_actor', '', true), "
                             "set_config('vitrine.einvoice_operator_answer', '', true)", (trigger,))
        cursor = database.execute_sql(
            "UPDATE einvoice_transmission t SET status = 'acknowledged', provider_status = 'accepted', "  # noqa: S608
            "operator_status = v.operator_status, last_synced_at = %s, updated_at = %s, status_changed_at = %s "
            f"FROM (VALUES {placeholders}) AS v(flow_id, operator_status) "
            "WHERE t.provider_flow_id = v.flow_id AND t.status = 'sent' RETURNING t.invoice_number, t.processing_rule",
            [now, now, now, *(item for row in rows for item in row)])
        lifecycle.announce_deposits(number for number, rule in cursor.fetchall() if rule == "B2B")
    return cursor.rowcount


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
