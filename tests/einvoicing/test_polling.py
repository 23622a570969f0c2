"""Polling passes: due only when the interval has elapsed since the last recorded pass, one at a
time, up to 50 transmissions each, an isolated error never breaking the pass."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from peewee import IntegrityError

from backend import clock
from backend.db import transaction
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


def test_a_pass_resyncs_sent_and_dispatching_transmissions_and_counts(issue, operator, operator_client, storage,
                                                                      log_lines):
    acknowledged, rejected, pending, lost = issue(), issue(), issue(), issue()
    for draft in (acknowledged, rejected, pending):
        lifecycle.dispatch(draft.id, client=operator_client, storage=storage)
    operator.act(Transmission.get_by_id(acknowledged.id).provider_flow_id, "ok")
    operator.act(Transmission.get_by_id(rejected.id).provider_flow_id, "error")
    # `lost`: accepted by the operator, but its worker died before recording the flow.
    operator.faults(lost_answers=1, unavailable_searches=3)
    operator_client_without_search = lifecycle.dispatch(lost.id, client=operator_client, storage=storage)
    assert operator_client_without_search.status == "failed"
    # Its worker died an hour ago, the claim expired; another is being dispatched right now.
    Transmission.update(status="dispatching", dispatch_claimed_at=clock.now() - timedelta(hours=1)).where(
        Transmission.id == lost.id).execute()
    in_progress = issue()
    Transmission.update(status="dispatching", dispatch_claimed_at=clock.now()).where(
        Transmission.id == in_progress.id).execute()
    never_dispatched = issue()  # pending_dispatch: not the poll's business

    polling_pass = polling.start_pass_if_due(1)
    counters = polling.run_pass(polling_pass, client=operator_client, storage=storage)

    assert counters == {"loaded": 4, "acknowledged": 1, "rejected": 1, "sent": 1, "unchanged": 1, "failed": 0,
                        "errors": 0}
    assert Transmission.get_by_id(lost.id).status == "sent"
    assert Transmission.get_by_id(never_dispatched.id).status == "pending_dispatch"
    assert len(operator.flows(lost.invoice_number)) == 1
    assert Transmission.get_by_id(in_progress.id).status == "dispatching"
    assert operator.flows(in_progress.invoice_number) == []
    recorded = PollingPass.get_by_id(polling_pass.id)
    assert (recorded.outcome, recorded.acknowledged, recorded.loaded) == ("completed", 1, 4)
    assert any(line["scope"] == "einvoicing.polling.pass" and line["acknowledged"] == 1 for line in log_lines())


def test_an_isolated_error_never_breaks_the_pass(issue, operator, operator_client, storage):
    drafts = [issue() for _ in range(3)]
    for draft in drafts:
        lifecycle.dispatch(draft.id, client=operator_client, storage=storage)
        operator.act(Transmission.get_by_id(draft.id).provider_flow_id, "ok")
    broken = Transmission.get_by_id(drafts[1].id).provider_flow_id

    class OneFlowFails:
        """The real client, except that asking for one flow raises (a bug, an odd answer)."""

        def __getattr__(self, name):
            return getattr(operator_client, name)

        def get_flow(self, flow_id):
            if flow_id == broken:
                raise RuntimeError("unexpected answer")
            return operator_client.get_flow(flow_id)

    counters = polling.run_pass(polling.start_pass_if_due(1), client=OneFlowFails(), storage=storage)
    assert (counters["acknowledged"], counters["errors"]) == (2, 1)
    assert Transmission.get_by_id(drafts[1].id).status == "sent"


def test_a_pass_takes_at_most_fifty_the_least_recently_synced_first(issue, storage, monkeypatch):
    from backend.einvoicing.operator_client import StubOperatorClient

    stub = StubOperatorClient()
    drafts = [issue(with_pdf=False) for _ in range(52)]
    for draft in drafts:
        lifecycle.dispatch(draft.id, client=stub, storage=storage, test_mode=True)
    counters = polling.run_pass(polling.start_pass_if_due(1), client=stub, storage=storage)
    assert counters["loaded"] == 50 and counters["acknowledged"] == 50
    assert Transmission.select().where(Transmission.status == "sent").count() == 2


def test_poll_if_due_is_quiet_until_due(issue, operator_client, storage):
    with clock.frozen_at(T0):
        assert polling.poll_if_due(interval_ms=900_000, client=operator_client, storage=storage) is not None
    with clock.frozen_at(T0 + timedelta(minutes=1)):
        assert polling.poll_if_due(interval_ms=900_000, client=operator_client, storage=storage) is None
