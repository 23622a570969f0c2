"""A draft's dispatch goes through the outbox to the actor, on a real worker, to the simulator;
the periodic job's pass takes it to `acknowledged`."""

from __future__ import annotations

from dataclasses import replace

import pytest

from backend.db import database
from backend.einvoicing.models import Transmission
from tests.einvoicing.conftest import wait_until

pytestmark = pytest.mark.committed


@pytest.fixture
def actor_operator(operator_client):
    """The worker's runtime booted with the simulator-backed operator client, then restored."""
    from backend.runtime import boot, current_runtime

    previous = current_runtime()
    boot(previous.config, role="worker", operator=operator_client)
    yield operator_client
    boot(previous.config, role="worker", **previous.clients())


def status_of(transmission_id: str) -> str:
    with database.connection_context():
        return Transmission.get_by_id(transmission_id).status


def test_a_created_draft_is_dispatched_by_the_actor_then_acknowledged_by_polling(
        issue, operator, actor_operator, worker, monkeypatch):
    import actors.einvoicing
    from backend.runtime import current_runtime

    with database.connection_context():
        draft = issue()
    wait_until(lambda: status_of(draft.id) == "sent")
    [flow] = operator.flows(draft.invoice_number)
    operator.act(flow["flowId"], "ok")

    runtime = current_runtime()
    polling_on = replace(runtime, config=replace(runtime.config, einvoicing_polling_enabled=True,
                                                 einvoicing_polling_interval_ms=1))
    monkeypatch.setattr(actors.einvoicing, "current_runtime", lambda: polling_on)
    actors.einvoicing.poll_einvoice_transmissions.send()
    wait_until(lambda: status_of(draft.id) == "acknowledged")
    assert operator.calls()["submit"] == 1


def test_polling_disabled_does_nothing(issue, operator, actor_operator):
    import actors.einvoicing
    from backend.einvoicing.models import PollingPass

    actors.einvoicing.poll_einvoice_transmissions()  # EINVOICING_POLLING_ENABLED defaults to false
    with database.connection_context():
        assert PollingPass.select().count() == 0


def test_an_approval_goes_to_sent_through_the_collection_hook_and_dispatch_actors(operator, actor_operator, worker,
                                                                                   storage):
    """Approval -> auto-collection actor -> invoice.issued -> post-invoice hook actor (PDF, draft)
    -> dispatch actor -> operator: every step a real actor on the worker, fed by the outbox."""
    from backend.billing.models import Invoice
    from backend.db import transaction
    from backend.documents.seeding import seed_default_versions
    from tests.billing.helpers import Market, approved_org

    with database.connection_context():
        seed_default_versions(storage)
        with transaction():
            industrial, distributor = approved_org("industrial"), approved_org("distributor")
            reservation = Market().reservation(industrial, distributor)

    def sent_transmission():
        with database.connection_context():
            invoice = Invoice.get_or_none(Invoice.reservation_id == reservation.id, Invoice.kind == "platform_sale")
            row = invoice and Transmission.get_or_none(Transmission.invoice_number == invoice.number)
            return row if row is not None and row.status == "sent" else None

    transmission = wait_until(sent_transmission, timeout=90)
    [flow] = operator.flows(transmission.invoice_number)
    assert flow["flowId"] == transmission.provider_flow_id and flow["size"] > 1000
