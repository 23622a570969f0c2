"""The transmission lifecycle against the operator simulator over HTTP (spec C's table)."""

from __future__ import annotations

import pytest

from backend.einvoicing import lifecycle
from backend.einvoicing.models import Transmission, TransmissionEvent
from backend.einvoicing.operator_client import StubOperatorClient
from backend.errors import Conflict, EinvoiceMissingPdf, EinvoiceProviderFailed


def history(transmission_id: str) -> list[TransmissionEvent]:
    return list(TransmissionEvent.select().where(TransmissionEvent.transmission == transmission_id)
                .order_by(TransmissionEvent.id))


def statuses(transmission_id: str) -> list[str]:
    return [event.to_status for event in history(transmission_id)]


@pytest.fixture
def dispatch(operator_client, storage):
    def run(transmission_id: str, **kwargs):
        return lifecycle.dispatch(transmission_id, client=operator_client, storage=storage, **kwargs)

    return run


@pytest.fixture
def resync(operator_client):
    def run(transmission_id: str, **kwargs):
        return lifecycle.resync(transmission_id, client=operator_client, **kwargs)

    return run


@pytest.fixture
def retry(operator_client, storage):
    def run(transmission_id: str, **kwargs):
        return lifecycle.retry(transmission_id, client=operator_client, storage=storage, actor_user_id="admin-1",
                               **kwargs)

    return run


def test_a_dispatched_invoice_is_sent_then_acknowledged(issue, dispatch, resync, operator):
    draft = issue()
    sent = dispatch(draft.id)
    assert (sent.status, sent.provider_status, sent.operator_status) == ("sent", "processing", "Pending")
    [flow] = operator.flows(draft.invoice_number)
    assert sent.provider_flow_id == flow["flowId"] and flow["name"] == f"{draft.invoice_number}.pdf"
    assert resync(draft.id).status == "sent"  # Pending: no move
    operator.act(flow["flowId"], "ok")
    done = resync(draft.id)
    assert (done.status, done.provider_status, done.operator_status) == ("acknowledged", "accepted", "Ok")
    events = history(draft.id)
    assert [(e.from_status, e.to_status, e.trigger) for e in events] == [
        (None, "pending_dispatch", "draft_created"), ("pending_dispatch", "dispatching", "dispatch"),
        ("dispatching", "sent", "dispatch"), ("sent", "acknowledged", "poll")]
    assert events[2].operator_answer["flowId"] == flow["flowId"]
    assert events[3].operator_answer["flowStatus"] == "Ok" and events[3].occurred_at is not None


def test_archived_also_acknowledges(issue, dispatch, resync, operator):
    draft = issue()
    flow_id = dispatch(draft.id).provider_flow_id
    operator.act(flow_id, "archive")
    assert resync(draft.id).status == "acknowledged"


def test_an_operator_error_rejects_with_its_message(issue, dispatch, resync, operator):
    draft = issue()
    flow_id = dispatch(draft.id).provider_flow_id
    operator.act(flow_id, "error", "Destinataire inconnu de l'annuaire")
    rejected = resync(draft.id)
    assert (rejected.status, rejected.provider_status) == ("rejected", "rejected")
    assert rejected.last_error_message == "Destinataire inconnu de l'annuaire"
    assert history(draft.id)[-1].error_message == "Destinataire inconnu de l'annuaire"


def test_terminal_statuses_never_move(issue, dispatch, resync, retry, operator):
    draft = issue()
    flow_id = dispatch(draft.id).provider_flow_id
    operator.act(flow_id, "ok")
    resync(draft.id)
    operator.act(flow_id, "error")
    assert resync(draft.id).status == "acknowledged"
    assert dispatch(draft.id).status == "acknowledged"
    with pytest.raises(Conflict):
        retry(draft.id)
    assert statuses(draft.id)[-1] == "acknowledged" and len(operator.flows(draft.invoice_number)) == 1
    rejected = issue()
    operator.act(dispatch(rejected.id).provider_flow_id, "error")
    assert resync(rejected.id).status == "rejected"
    with pytest.raises(Conflict):
        lifecycle.admin_resync(rejected.id, client=None)


def test_an_unknown_operator_status_never_moves_sent(issue, dispatch, resync, operator, monkeypatch):
    draft = issue()
    flow_id = dispatch(draft.id).provider_flow_id
    operator.simulator.store.flows[flow_id]["flowStatus"] = "Quarantined"
    after = resync(draft.id)
    assert (after.status, after.operator_status) == ("sent", "Quarantined")


def test_a_redelivered_dispatch_does_nothing(issue, dispatch, operator):
    draft = issue()
    first = dispatch(draft.id)
    second = dispatch(draft.id)
    assert second.status == "sent" and second.provider_flow_id == first.provider_flow_id
    assert operator.calls()["submit"] == 1 and second.dispatch_attempts == 1


@pytest.mark.parametrize(("fault", "searches", "expected_waits"),
                         [("rate_limited_calls", 0, [1.0, 1.0]), ("unavailable_submits", 2, [0.5, 1.0])])
def test_429_and_503_retried_twice_then_failed_then_retried_by_the_admin(issue, dispatch, retry, operator, waits,
                                                                        fault, searches, expected_waits):
    draft = issue()
    operator.faults(**{fault: 3})
    failed = dispatch(draft.id)
    assert (failed.status, failed.last_error_code) == ("failed", "EINVOICE_PROVIDER_FAILED")
    assert "unavailable" in failed.last_error_message
    assert operator.calls()["submit"] == 3 and operator.calls()["search"] == searches and waits == expected_waits
    assert history(draft.id)[-1].error_code == "EINVOICE_PROVIDER_FAILED"
    sent = retry(draft.id)
    assert sent.status == "sent" and sent.dispatch_attempts == 2
    assert len(operator.flows(draft.invoice_number)) == 1
    assert [(e.from_status, e.to_status, e.trigger, e.actor_user_id) for e in history(draft.id)][-2:] == [
        ("failed", "dispatching", "admin_retry", "admin-1"), ("dispatching", "sent", "admin_retry", "admin-1")]


def test_401_gives_failed_with_provider_failed_and_the_retry_answers_502(issue, dispatch, retry, operator):
    draft = issue()
    operator.faults(unauthorized=True)
    failed = dispatch(draft.id)
    assert (failed.status, failed.last_error_code) == ("failed", "EINVOICE_PROVIDER_FAILED")
    assert "HTTP 401" in failed.last_error_message
    with pytest.raises(EinvoiceProviderFailed):
        retry(draft.id)
    assert Transmission.get_by_id(draft.id).status == "failed"


def test_wrong_client_credentials_fail_the_dispatch(issue, make_operator_client, storage, operator):
    draft = issue()
    client = make_operator_client(client_secret="rotated-but-not-restarted")
    failed = lifecycle.dispatch(draft.id, client=client, storage=storage)
    assert (failed.status, failed.last_error_code) == ("failed", "EINVOICE_PROVIDER_FAILED")


def test_missing_operator_identity_refuses_the_transmission(issue, make_operator_client, storage, operator):
    draft = issue()
    failed = lifecycle.dispatch(draft.id, client=make_operator_client(entity_id=None), storage=storage)
    assert failed.status == "failed" and "ODP_ENTITY_ID" in failed.last_error_message
    assert operator.calls() == {"token": 0, "submit": 0, "search": 0, "directory": 0}


def test_without_pdf_the_dispatch_fails_with_missing_pdf_and_the_retry_answers_409(issue, dispatch, retry, operator):
    draft = issue(with_pdf=False)
    failed = dispatch(draft.id)
    assert (failed.status, failed.last_error_code) == ("failed", "EINVOICE_MISSING_PDF")
    with pytest.raises(EinvoiceMissingPdf):
        retry(draft.id)
    assert operator.calls()["submit"] == 0


def test_a_pdf_key_whose_object_is_gone_is_a_missing_pdf(issue, dispatch, storage):
    draft = issue()
    storage.delete(lifecycle.INVOICE_PDF_CONTEXT, draft.document_pdf_key)
    assert dispatch(draft.id).last_error_code == "EINVOICE_MISSING_PDF"


def test_test_mode_tolerates_a_missing_pdf_and_needs_no_network(issue, storage):
    draft = issue(with_pdf=False)
    stub = StubOperatorClient()
    sent = lifecycle.dispatch(draft.id, client=stub, storage=storage, test_mode=True)
    assert sent.status == "acknowledged" and sent.provider_flow_id.startswith("stub-")


def test_an_answer_lost_after_acceptance_gives_one_flow_after_the_retry(issue, dispatch, retry, operator):
    draft = issue()
    # The flow is accepted but its answer lost, and the search that follows cannot be answered.
    operator.faults(lost_answers=1, unavailable_searches=3)
    failed = dispatch(draft.id)
    assert failed.status == "failed"
    sent = retry(draft.id)  # searches first (an attempt was made): finds the flow, posts nothing
    [flow] = operator.flows(draft.invoice_number)
    assert sent.status == "sent" and sent.provider_flow_id == flow["flowId"]
    assert operator.calls()["submit"] == 1


def test_an_answer_lost_is_recovered_within_the_dispatch(issue, dispatch, operator):
    draft = issue()
    operator.faults(lost_answers=1)
    sent = dispatch(draft.id)
    assert sent.status == "sent" and len(operator.flows(draft.invoice_number)) == 1


def test_retry_only_from_failed_or_pending_dispatch(issue, dispatch, retry, operator):
    pending = issue()
    assert retry(pending.id).status == "sent"  # pending_dispatch is retryable
    with pytest.raises(Conflict):
        retry(pending.id)  # sent is not


def test_resync_of_a_failed_transmission_finds_its_flow(issue, dispatch, resync, operator):
    draft = issue()
    operator.faults(lost_answers=1, unavailable_searches=3)
    assert dispatch(draft.id).status == "failed"
    found = resync(draft.id, trigger="admin_resync")
    assert found.status == "sent"
    assert statuses(draft.id)[-3:] == ["failed", "dispatching", "sent"]


def test_admin_resync_answers_502_when_the_operator_cannot_be_asked(issue, dispatch, operator, operator_client):
    draft = issue()
    dispatch(draft.id)
    operator.faults(unauthorized=True)
    with pytest.raises(EinvoiceProviderFailed):
        lifecycle.admin_resync(draft.id, client=operator_client)


def test_one_token_call_for_twenty_dispatches_and_a_new_one_after_expiry(issue, dispatch, operator, clock):
    drafts = [issue() for _ in range(20)]
    for draft in drafts:
        assert dispatch(draft.id).status == "sent"
    assert operator.calls()["token"] == 1
    clock.advance(3600)
    assert dispatch(issue().id).status == "sent"
    assert operator.calls()["token"] == 2


def test_lifecycle_rows_are_stored_once_in_order_and_the_latest_is_kept(issue, dispatch):
    """Redelivered or polled twice, a status is one row; an unknown code or date is left out; the
    transmission's latest code follows the dates, not the arrival order."""
    from backend.einvoicing import reform_statuses
    from backend.einvoicing.models import LifecycleEvent
    from backend.einvoicing.operator_client import LifecycleStatus

    draft = issue()
    received = LifecycleStatus(202, "2026-11-24T10:00:00.000Z")
    approved = LifecycleStatus(205, "2026-11-25T09:30:00.000Z", "bon pour paiement")
    assert reform_statuses.record([(draft.id, approved), (draft.id, received)]) == 2
    assert reform_statuses.record([(draft.id, received), (draft.id, approved),
                                   (draft.id, LifecycleStatus(299, "2026-11-25T10:00:00Z")),
                                   (draft.id, LifecycleStatus(210, "yesterday"))]) == 0
    rows = list(LifecycleEvent.select().where(LifecycleEvent.transmission == draft.id)
                .order_by(LifecycleEvent.at))
    assert [(row.code, row.reason) for row in rows] == [(202, None), (205, "bon pour paiement")]
    assert Transmission.get_by_id(draft.id).lifecycle_code == 205
