"""Polling passes: due only when the interval has elapsed since the last recorded pass, one at a
time; one search per page of changed flows; an isolated error never breaking the pass."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from peewee import IntegrityError

from backend import clock
from backend.db import database, transaction
from backend.einvoicing import lifecycle, polling
from backend.einvoicing.models import PollingPass, Transmission

T0 = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def no_earlier_passes():
    PollingPass.delete().execute()


def test_a_pass_starts_only_when_the_interval_has_elapsed_since_the_last_one():
    with clock.frozen_at(T0):
        first = polling.start_pass_if_due(900_000)
        assert first is not None
        assert polling.start_pass_if_due(900_000) is None  # still running
    PollingPass.update(outcome="completed", finished_at=T0).execute()
    # Due at the interval less the minute job's jitter (5 s).
    with clock.frozen_at(T0 + timedelta(minutes=14, seconds=54)):
        assert polling.start_pass_if_due(900_000) is None
    with clock.frozen_at(T0 + timedelta(minutes=14, seconds=55)):
        assert polling.start_pass_if_due(900_000) is not None


def test_a_one_minute_interval_passes_every_minute_despite_the_jitter():
    with clock.frozen_at(T0):
        polling.start_pass_if_due(60_000)
    PollingPass.update(outcome="completed", finished_at=T0).execute()
    with clock.frozen_at(T0 + timedelta(seconds=59, milliseconds=900)):
        assert polling.start_pass_if_due(60_000) is not None


def test_a_running_pass_blocks_the_next_until_it_is_abandoned():
    with clock.frozen_at(T0):
        polling.start_pass_if_due(60_000)
    with clock.frozen_at(T0 + timedelta(minutes=29)):
        assert polling.start_pass_if_due(60_000) is None
    with clock.frozen_at(T0 + timedelta(minutes=31)):
        assert polling.start_pass_if_due(60_000) is not None
    assert [p.outcome for p in PollingPass.select().order_by(PollingPass.id)] == ["abandoned", "running"]


def test_the_database_admits_one_running_pass():
    PollingPass.create(started_at=T0)
    with pytest.raises(IntegrityError), transaction():
        PollingPass.create(started_at=T0)


def test_a_pass_applies_the_changed_flows_and_dispatches_expired_claims(issue, operator, operator_client, storage,
                                                                        log_lines):
    acknowledged, rejected, pending, lost = issue(), issue(), issue(), issue()
    for draft in (acknowledged, rejected, pending):
        lifecycle.dispatch(draft.id, client=operator_client, storage=storage)
    operator.act(Transmission.get_by_id(acknowledged.id).provider_flow_id, "ok")
    operator.act(Transmission.get_by_id(rejected.id).provider_flow_id, "error")
    # `lost`: accepted by the operator, but its worker died before recording the flow.
    operator.faults(lost_answers=1, unavailable_searches=3)
    assert lifecycle.dispatch(lost.id, client=operator_client, storage=storage).status == "failed"
    # Its worker died an hour ago, the claim expired; another is being dispatched right now.
    Transmission.update(status="dispatching", dispatch_claimed_at=clock.now() - timedelta(hours=1),
                        next_dispatch_at=None).where(Transmission.id == lost.id).execute()
    in_progress = issue()
    Transmission.update(status="dispatching", dispatch_claimed_at=clock.now()).where(
        Transmission.id == in_progress.id).execute()
    never_dispatched = issue()  # pending_dispatch: not the poll's business
    searches_before = operator.calls()["search"]

    polling_pass = polling.start_pass_if_due(1)
    counters = polling.run_pass(polling_pass, client=operator_client, storage=storage)

    # `lost` found by its tracking id (1 search), then one search for every change since.
    assert counters == {"loaded": 5, "acknowledged": 1, "rejected": 1, "sent": 1, "unchanged": 2, "failed": 0,
                        "errors": 0, "searches": 1, "lifecycle": 0}
    assert operator.calls()["search"] - searches_before == 2
    assert [Transmission.get_by_id(t.id).status for t in (acknowledged, rejected, lost, never_dispatched)] == [
        "acknowledged", "rejected", "sent", "pending_dispatch"]
    assert len(operator.flows(lost.invoice_number)) == 1
    assert Transmission.get_by_id(in_progress.id).status == "dispatching"
    assert operator.flows(in_progress.invoice_number) == []
    recorded = PollingPass.get_by_id(polling_pass.id)
    assert (recorded.outcome, recorded.acknowledged, recorded.searches) == ("completed", 1, 1)
    # Where the next search starts: the latest change the operator reported (its clock).
    assert clock.iso(recorded.updated_after) == max(flow["updatedAt"] for flow in operator.flows())
    assert any(line["scope"] == "einvoicing.polling.pass" and line["acknowledged"] == 1 for line in log_lines())


def test_the_next_pass_searches_from_the_last_complete_one_and_a_failed_search_is_searched_again(
        issue, operator, operator_client, storage):
    draft = issue()
    flow_id = lifecycle.dispatch(draft.id, client=operator_client, storage=storage).provider_flow_id
    operator.faults(unavailable_searches=3)
    failed = polling.run_pass(polling.start_pass_if_due(1), client=operator_client, storage=storage)
    assert failed["errors"] == 1 and PollingPass.get(PollingPass.outcome == "completed").updated_after is None
    operator.act(flow_id, "ok")
    assert polling.run_pass(polling.start_pass_if_due(1), client=operator_client, storage=storage)[
        "acknowledged"] == 1


def test_broken_transmissions_never_hold_the_others_back(issue, operator, operator_client, storage, monkeypatch):
    """A dispatch again that raises moves its transmission's `last_synced_at`: the next pass takes
    the others first (before, 50 broken ones blocked every pass)."""
    monkeypatch.setattr(polling, "PASS_SIZE", 2)
    broken = [issue(), issue()]
    healthy = issue()
    for draft in (*broken, healthy):
        Transmission.update(status="dispatching", dispatch_claimed_at=clock.now() - timedelta(hours=1),
                            dispatch_attempts=1).where(Transmission.id == draft.id).execute()
    broken_numbers = {t.invoice_number for t in broken}

    class SomeSearchesFail:
        """The real client, except that searching some tracking ids raises (a bug, an odd answer)."""

        def __getattr__(self, name):
            return getattr(operator_client, name)

        def find_by_tracking_id(self, tracking_id):
            if tracking_id in broken_numbers:
                raise RuntimeError("unexpected answer")
            return operator_client.find_by_tracking_id(tracking_id)

    first = polling.run_pass(polling.start_pass_if_due(1), client=SomeSearchesFail(), storage=storage)
    assert first["errors"] == 2 and Transmission.get_by_id(healthy.id).status == "dispatching"
    second = polling.run_pass(polling.start_pass_if_due(1), client=SomeSearchesFail(), storage=storage)
    assert second["sent"] == 1 and Transmission.get_by_id(healthy.id).status == "sent"


@pytest.mark.owner  # deletes its transmissions afterwards, which the runtime role may not
def test_a_pass_over_ten_thousand_open_transmissions_makes_one_search_per_hundred(operator, operator_client,
                                                                                 storage):
    count = 10_000
    tag = uuid.uuid4().hex[:8]
    now = clock.now()
    database.execute_sql(
        "INSERT INTO einvoice_transmission (id, idempotency_key, invoice_number, invoice_kind, document_kind, "
        "flow_type, amount_incl_tax_cents, created_at, updated_at, status_changed_at) "
        "SELECT %s || n, %s || n || ':invoice:fr_domestic_b2b', %s || n, NULL, 'invoice', "
        "'fr_domestic_b2b', 100, %s, %s, %s FROM generate_series(1, %s) n",
        (f"bulk-{tag}-", f"BULK-{tag}-", f"BULK-{tag}-", now, now, now, count))
    database.execute_sql("UPDATE einvoice_transmission SET status = 'dispatching' WHERE id LIKE %s",
                         (f"bulk-{tag}-%",))
    database.execute_sql("UPDATE einvoice_transmission SET status = 'sent', provider_status = 'processing', "
                         "provider_flow_id = 'flow-' || id WHERE id LIKE %s", (f"bulk-{tag}-%",))
    store = operator.simulator.store
    with store.lock:
        for n in range(1, count + 1):
            at = time.time()
            store.flows[f"flow-bulk-{tag}-{n}"] = {
                "flowId": f"flow-bulk-{tag}-{n}", "trackingId": f"BULK-{tag}-{n}", "flowMode": "Sandbox",
                "flowStatus": "Ok", "lifecycle": [], "submittedAt": at, "updatedAt": at}
    try:
        counters = polling.run_pass(polling.start_pass_if_due(1), client=operator_client, storage=storage)
        # 100 searches of changed flows; any other search is a dispatch again of another test's
        # transmission left in the database (at most one each).
        assert counters["searches"] == 100
        assert 100 <= operator.calls()["search"] <= 100 + counters["loaded"] - count
        assert counters["acknowledged"] == count
        assert Transmission.select().where(Transmission.id.startswith(f"bulk-{tag}-"),
                                           Transmission.status == "acknowledged").count() == count
    finally:  # the other tests' passes need not follow them
        Transmission.delete().where(Transmission.id.startswith(f"bulk-{tag}-")).execute()


def test_poll_if_due_is_quiet_until_due(issue, operator_client, storage):
    with clock.frozen_at(T0):
        assert polling.poll_if_due(interval_ms=900_000, client=operator_client, storage=storage) is not None
    with clock.frozen_at(T0 + timedelta(minutes=1)):
        assert polling.poll_if_due(interval_ms=900_000, client=operator_client, storage=storage) is None


def test_a_throttled_dispatch_is_dispatched_again_automatically_with_backoff(issue, operator, operator_client,
                                                                            storage):
    """A burst over the operator's quota (429 with a Retry-After longer than a worker waits) leaves
    the transmission `failed` with its next dispatch planned, never for an admin: a pass after
    that time dispatches it again."""
    draft = issue()
    operator.settings(retry_after_seconds=90)
    operator.faults(rate_limited_calls=1)
    failed = lifecycle.dispatch(draft.id, client=operator_client, storage=storage)
    assert failed.status == "failed" and operator.calls()["submit"] == 1
    assert failed.next_dispatch_at - failed.updated_at > timedelta(seconds=89)  # the Retry-After, not 30 s
    assert polling.run_pass(polling.start_pass_if_due(1), client=operator_client, storage=storage)["sent"] == 0
    with clock.frozen_at(failed.next_dispatch_at + timedelta(seconds=1)):
        counters = polling.run_pass(polling.start_pass_if_due(1), client=operator_client, storage=storage)
    after = Transmission.get_by_id(draft.id)
    assert counters["sent"] == 1 and after.status == "sent" and after.next_dispatch_at is None
    assert lifecycle.retry_delay(3, None) == timedelta(minutes=2)
    assert lifecycle.retry_delay(20, None) == lifecycle.RETRY_CAP


def test_a_dispatch_never_outlives_its_claim():
    """The actor's time limit ends a dispatch; the lease covers it and a read still blocked then."""
    from actors.einvoicing import dispatch_einvoice_transmission
    from backend.einvoicing.operator_client import OdpClient

    limit = timedelta(milliseconds=dispatch_einvoice_transmission.options["time_limit"])
    client = OdpClient(base_url="http://x", token_url="http://x", client_id="c", client_secret="s", entity_id="e")
    assert limit == lifecycle.DISPATCH_TIME_LIMIT
    assert limit + timedelta(seconds=sum(client.timeout)) <= lifecycle.DISPATCH_LEASE
