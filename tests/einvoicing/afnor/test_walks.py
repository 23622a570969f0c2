"""The e-invoicing walks on an AFNOR XP Z12-013 platform (the simulator over HTTP, every call
validated against our description of the standard): deposit, acknowledgement, rejection as the
reform's 213, an incoming status, the 212 sent as a CDAR flow, an unknown recipient."""

from __future__ import annotations

from datetime import date

import pytest

from backend.billing.bank import settlement as bank_settlement
from backend.billing.invoicing.post_invoice_hook import run_post_invoice_hook
from backend.billing.models import Invoice, PaymentOrder
from backend.einvoicing import lifecycle, polling
from backend.einvoicing.afnor_client import tracking_id_for
from backend.einvoicing.models import LifecycleEvent, PaymentReport, Transmission
from tests.einvoicing.test_end_to_end import collect_sale


@pytest.fixture
def seeded(storage):
    from backend.documents.seeding import seed_default_versions

    return seed_default_versions(storage)


def poll(client, storage) -> dict[str, int]:
    return polling.run_pass(polling.start_pass_if_due(1), client=client, storage=storage)


def deposit(storage, config, client) -> tuple[str, str, str]:
    """A collected sale, deposited: (invoice number, transmission id, flow id)."""
    invoice = collect_sale()
    draft_id = run_post_invoice_hook(invoice.id, storage=storage, config=config).transmission_id
    sent = lifecycle.dispatch(draft_id, client=client, storage=storage)
    assert sent.status == "sent"
    return invoice.number, draft_id, sent.provider_flow_id


def test_a_deposited_invoice_is_acknowledged_by_polling(seeded, storage, config, platform, afnor_client, contract):
    number, draft_id, flow_id = deposit(storage, config, afnor_client)
    [flow] = platform.flows(number)
    assert (flow["flowId"], flow["flowSyntax"], flow["flowProfile"]) == (flow_id, "Factur-X", "Basic")
    assert poll(afnor_client, storage)["acknowledged"] == 0  # Pending: nothing confirmed yet
    platform.act(flow_id, "ok")
    assert poll(afnor_client, storage)["acknowledged"] == 1
    assert Transmission.get_by_id(draft_id).status == "acknowledged"
    assert ("GET", "/v1/directory-line", 200) in contract.operations()


def test_an_error_acknowledgement_rejects_with_the_reform_s_213(seeded, storage, config, platform, afnor_client):
    _, draft_id, flow_id = deposit(storage, config, afnor_client)
    platform.act(flow_id, "error", "Fichier vide", code="EmptyFlow")
    for _ in range(2):  # a second pass adds nothing
        poll(afnor_client, storage)
    rejected = Transmission.get_by_id(draft_id)
    assert (rejected.status, rejected.last_error_message) == ("rejected", "Fichier vide")
    [event] = LifecycleEvent.select().where(LifecycleEvent.transmission == draft_id)
    assert (event.code, event.reason) == (213, "REJ_SEMAN Fichier vide")


def test_an_incoming_status_and_the_212_sent_as_a_cdar_flow(seeded, storage, config, platform, afnor_client):
    number, draft_id, flow_id = deposit(storage, config, afnor_client)
    platform.act(flow_id, "ok")
    platform.lifecycle(flow_id, 204)
    poll(afnor_client, storage)
    transmission = Transmission.get_by_id(draft_id)
    assert (transmission.status, transmission.lifecycle_code) == ("acknowledged", 204)
    invoice = Invoice.get(Invoice.number == number)
    [collected] = PaymentOrder.select().where(PaymentOrder.invoice == invoice.id)
    bank_settlement.settle(collected.id, booked_on=date(2026, 12, 3))
    for _ in range(2):  # a second pass sends nothing more
        poll(afnor_client, storage)
    [report] = platform.flows(tracking_id_for(f"{number}:212:{collected.id}"))
    assert (report["flowSyntax"], report["flowType"], report["flowDirection"]) == ("CDAR", "CustomerInvoiceLC", "Out")
    assert PaymentReport.get(PaymentReport.invoice_number == number).status == "sent"


def test_an_unknown_recipient_holds_the_deposit(seeded, storage, config, platform, afnor_client):
    invoice = collect_sale()
    transmission = Transmission.get_by_id(run_post_invoice_hook(invoice.id, storage=storage,
                                                                config=config).transmission_id)
    platform.control("directory", {"siren": transmission.buyer_siren, "registered": False})
    blocked = lifecycle.dispatch(transmission.id, client=afnor_client, storage=storage)
    assert (blocked.status, blocked.last_error_code) == ("failed", "EINVOICE_RECIPIENT_UNKNOWN")
    assert platform.calls()["submit"] == 0
