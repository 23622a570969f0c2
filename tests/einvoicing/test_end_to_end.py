"""From a collection to `acknowledged`: the collection issues the sale invoice, the post-invoice
hook stores its Factur-X PDF and creates the draft, the dispatch posts the PDF to the operator
simulator over HTTP, the operator accepts it and a polling pass acknowledges it; the
reconciliation shows it. An EU or export buyer is sent for e-reporting; the frozen buyer decides
the flow; an unknown recipient blocks the dispatch; each payment gets its 212."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import date, timedelta

import pytest

from backend import clock
from backend.billing import corrections
from backend.billing.bank import settlement as bank_settlement
from backend.billing.collection import collect
from backend.billing.invoicing.post_invoice_hook import run_post_invoice_hook
from backend.billing.models import Invoice, PaymentMethod, PaymentOrder
from backend.db import transaction
from backend.einvoicing import lifecycle, polling, reconciliation, views
from backend.einvoicing.models import DirectoryEntry, LifecycleEvent, PaymentReport, Transmission
from backend.errors import EinvoiceRecipientUnknown
from backend.identity.models import BillingProfile
from backend.listing import ListParams
from tests.billing.helpers import Market, approved_org, booted_config


@pytest.fixture
def seeded(storage):
    from backend.documents.seeding import seed_default_versions

    return seed_default_versions(storage)


PLATFORM_SIRET = "90123456700013"


def collect_sale(buyer_country: str = "FR") -> Invoice:
    """A collected sale, issued by a platform with its legal identity (a status names its SIREN)."""
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    BillingProfile.update(country=buyer_country).where(BillingProfile.organization == industrial.id).execute()
    reservation = Market().reservation(industrial, distributor, price_cents=100_000)
    answer = collect.collect(reservation_id=reservation.id, industrial_organization_id=industrial.id,
                                method=PaymentMethod.BANK_TRANSFER, key=f"k-{reservation.id}", user_id=None,
                                config=replace(booted_config(), platform_legal_siret=PLATFORM_SIRET))
    return Invoice.get(Invoice.number == answer.invoice_number)


def test_a_collected_sale_invoice_reaches_acknowledged(seeded, storage, config, operator, operator_client):
    invoice = collect_sale()
    outcome = run_post_invoice_hook(invoice.id, storage=storage, config=config)
    assert outcome.transmission_id and outcome.idempotent is False
    draft = Transmission.get_by_id(outcome.transmission_id)
    assert (draft.status, draft.flow_type, draft.document_kind, draft.invoice_kind) == (
        "pending_dispatch", "fr_domestic_b2b", "invoice", "platform_sale")
    assert draft.amount_incl_tax_cents == 144_000  # 1,200.00 excluding tax + 20 % VAT

    sent = lifecycle.dispatch(draft.id, client=operator_client, storage=storage)
    [flow] = operator.flows(invoice.number)
    pdf = storage.read_bytes(lifecycle.INVOICE_PDF_CONTEXT, draft.document_pdf_key)
    assert sent.status == "sent" and flow["sha256"] == hashlib.sha256(pdf).hexdigest()
    assert flow["name"] == f"{invoice.number}.pdf" and flow["size"] == len(pdf)

    operator.act(flow["flowId"], "ok")
    counters = polling.run_pass(polling.start_pass_if_due(1), client=operator_client, storage=storage)
    assert counters["acknowledged"] >= 1
    assert Transmission.get_by_id(draft.id).status == "acknowledged"

    # The hook again: the same transmission, idempotent.
    again = run_post_invoice_hook(invoice.id, storage=storage, config=config)
    assert (again.transmission_id, again.idempotent) == (draft.id, True)

    with clock.frozen_at(clock.now() + timedelta(hours=1)):
        snapshot = reconciliation.snapshot(config)
    assert snapshot["transmissionsByStatus"]["acknowledged"] >= 1
    assert snapshot["invoicesInScope"] >= 1 and snapshot["missingTransmission"] == 0


def test_an_operator_error_rejects_the_collected_invoice(seeded, storage, config, operator, operator_client):
    invoice = collect_sale()
    draft_id = run_post_invoice_hook(invoice.id, storage=storage, config=config).transmission_id
    flow_id = lifecycle.dispatch(draft_id, client=operator_client, storage=storage).provider_flow_id
    operator.act(flow_id, "error", "Le SIREN de l'acheteur est inconnu")
    rejected = lifecycle.resync(draft_id, client=operator_client)
    assert (rejected.status, rejected.last_error_message) == ("rejected", "Le SIREN de l'acheteur est inconnu")
    # The reform's 213 Rejetée, with a reason of its list (the operator named none: a semantic rejection).
    [event] = LifecycleEvent.select().where(LifecycleEvent.transmission == draft_id)
    assert (event.code, event.reason) == (213, "REJ_SEMAN Le SIREN de l'acheteur est inconnu")
    assert Transmission.get_by_id(draft_id).lifecycle_code == 213
    assert draft_id in [t.id for t in views.list_transmissions(params=ListParams(), statuses=[], flow_types=[],
                                                                document_kinds=[], attention=True).items]
    with clock.frozen_at(clock.now() + timedelta(hours=1)):
        snapshot = reconciliation.snapshot(config)
    assert snapshot["providerFailed"] >= 1 and snapshot["refusedBacklog"] >= 1


def test_a_polled_operator_error_is_a_213_with_the_operator_s_code(seeded, storage, config, operator,
                                                                    operator_client):
    invoice = collect_sale()
    draft_id = run_post_invoice_hook(invoice.id, storage=storage, config=config).transmission_id
    flow_id = lifecycle.dispatch(draft_id, client=operator_client, storage=storage).provider_flow_id
    operator.act(flow_id, "error", "Facture déjà déposée", code="DOUBLON")
    for _ in range(2):  # a second pass adds nothing
        polling.run_pass(polling.start_pass_if_due(1), client=operator_client, storage=storage)
    [event] = LifecycleEvent.select().where(LifecycleEvent.transmission == draft_id)
    assert (event.code, event.reason) == (213, "DOUBLON Facture déjà déposée")
    assert Transmission.get_by_id(draft_id).status == "rejected"


@pytest.mark.parametrize(("country", "flow_type"), [("DE", "eu_intra_b2b"), ("CH", "export_b2b")])
def test_an_eu_or_export_buyer_is_sent_for_e_reporting(seeded, storage, config, operator, operator_client, country,
                                                       flow_type):
    invoice = collect_sale(country)
    outcome = run_post_invoice_hook(invoice.id, storage=storage, config=config)
    transmission = Transmission.get_by_id(outcome.transmission_id)
    assert (transmission.flow_type, transmission.processing_rule) == (flow_type, "B2BInt")
    sent = lifecycle.dispatch(transmission.id, client=operator_client, storage=storage)
    [flow] = operator.flows(invoice.number)
    assert sent.status == "sent" and flow["processingRule"] == "B2BInt" and flow["flowSyntax"] == "Factur-X"
    assert operator.calls()["directory"] == 0  # a foreign buyer has no French directory line
    with clock.frozen_at(clock.now() + timedelta(hours=1)):
        snapshot = reconciliation.snapshot(replace(config))
    assert snapshot["missingTransmission"] == 0 and snapshot["eReportingByStatus"]["sent"] >= 1


def test_the_frozen_buyer_decides_where_the_invoice_goes_not_the_live_profile(seeded, storage, config):
    invoice = collect_sale("FR")
    frozen_siren = invoice.customer["siren"]
    # The buyer moves to Germany after the invoice was issued: the issued invoice still goes to France.
    BillingProfile.update(country="DE").where(
        BillingProfile.organization == invoice.customer_organization_id).execute()
    transmission = Transmission.get_by_id(run_post_invoice_hook(invoice.id, storage=storage,
                                                                config=config).transmission_id)
    assert (transmission.flow_type, transmission.processing_rule) == ("fr_domestic_b2b", "B2B")
    assert (transmission.buyer_country, transmission.buyer_siren) == ("FR", frozen_siren)


def test_an_unknown_recipient_blocks_the_dispatch_without_posting(seeded, storage, config, operator,
                                                                  operator_client):
    invoice = collect_sale()
    transmission = Transmission.get_by_id(run_post_invoice_hook(invoice.id, storage=storage,
                                                                config=config).transmission_id)
    operator.control("directory", {"siren": transmission.buyer_siren, "registered": False})
    blocked = lifecycle.dispatch(transmission.id, client=operator_client, storage=storage)
    assert (blocked.status, blocked.last_error_code) == ("failed", "EINVOICE_RECIPIENT_UNKNOWN")
    assert f"the buyer's SIREN {transmission.buyer_siren}" in blocked.last_error_message
    assert operator.calls()["submit"] == 0 and operator.flows(invoice.number) == []
    assert transmission.id in _attention()  # held, with its reason, for the admin
    with pytest.raises(EinvoiceRecipientUnknown):  # the admin retry: 409, the answer cached a day
        lifecycle.retry(transmission.id, client=operator_client, storage=storage)
    assert operator.calls()["directory"] == 1
    assert DirectoryEntry.get_by_id(transmission.buyer_siren).registered is False
    with clock.frozen_at(clock.now() + timedelta(hours=1)):
        assert reconciliation.snapshot(config)["recipientUnknown"] >= 1
    # Registered since, and a day later: asked again, then posted.
    operator.control("directory", {"siren": transmission.buyer_siren, "registered": True})
    with clock.frozen_at(clock.now() + timedelta(days=1, seconds=1)):
        sent = lifecycle.retry(transmission.id, client=operator_client, storage=storage)
    assert sent.status == "sent" and operator.calls()["directory"] == 2


def test_a_212_is_sent_once_per_payment_and_a_negative_one_after_a_refund(seeded, storage, config, operator,
                                                                          operator_client):
    invoice = collect_sale()
    draft_id = run_post_invoice_hook(invoice.id, storage=storage, config=config).transmission_id
    flow_id = lifecycle.dispatch(draft_id, client=operator_client, storage=storage).provider_flow_id
    operator.act(flow_id, "ok")
    [collected] = PaymentOrder.select().where(PaymentOrder.invoice == invoice.id)
    polling.run_pass(polling.start_pass_if_due(1), client=operator_client, storage=storage)
    assert operator.flows(f"{invoice.number}:212:{collected.id}") == []  # paid, not yet shown by the bank
    booked_on = date(2026, 12, 3)
    bank_settlement.settle(collected.id, booked_on=booked_on)  # a statement booked it
    for _ in range(2):  # a second pass sends nothing more
        polling.run_pass(polling.start_pass_if_due(1), client=operator_client, storage=storage)
    [report] = operator.flows(f"{invoice.number}:212:{collected.id}")
    assert report["flowType"] == "CustomerInvoiceLC" and report["flowSyntax"] == "CDAR"  # a CDAR message it took
    status = report["statusReport"]
    assert (status["code"], status["invoiceNumber"], status["issuerSiren"]) == (212, invoice.number, "901234567")
    assert status["amounts"] == [{"vatRateBps": invoice.vat_rate_bps, "amountCents": 144_000}]
    assert status["at"].startswith(booked_on.isoformat())  # the day the bank booked it

    with transaction():
        refunded = corrections.refund(invoice_number=invoice.number, amount_cents=10_000, reason="geste commercial",
                                      method=PaymentMethod.BANK_TRANSFER, user_id=None, config=booted_config())
    bank_settlement.settle(refunded.payment_order_id, booked_on=date(2026, 12, 8))
    polling.run_pass(polling.start_pass_if_due(1), client=operator_client, storage=storage)
    [negative] = operator.flows(f"{invoice.number}:212:{refunded.payment_order_id}")
    assert negative["statusReport"]["at"].startswith("2026-12-08")
    assert negative["statusReport"]["amounts"] == [{"vatRateBps": invoice.vat_rate_bps, "amountCents": -12_000}]
    assert len(operator.flows(flow_type="CustomerInvoiceLC")) == 2
    assert PaymentReport.select().where(PaymentReport.invoice_number == invoice.number,
                                        PaymentReport.status == "sent").count() == 2


def test_an_invoice_without_its_transmission_is_missing_after_15_minutes(seeded, config):
    collect_sale()  # the hook never ran (a PDF failure): no draft
    with clock.frozen_at(clock.now() + timedelta(minutes=16)):
        snapshot = reconciliation.snapshot(config)
    assert snapshot["missingTransmission"] >= 1


def _deposited_sale(storage, config, operator, operator_client) -> tuple[Invoice, str, str]:
    """A collected sale deposited and acknowledged: (invoice, transmission id, flow id)."""
    invoice = collect_sale()
    draft_id = run_post_invoice_hook(invoice.id, storage=storage, config=config).transmission_id
    flow_id = lifecycle.dispatch(draft_id, client=operator_client, storage=storage).provider_flow_id
    operator.act(flow_id, "ok")
    polling.run_pass(polling.start_pass_if_due(1), client=operator_client, storage=storage)
    return invoice, draft_id, flow_id


def _attention() -> list[str]:
    return [t.id for t in views.list_transmissions(params=ListParams(page_size=100), statuses=[], flow_types=[],
                                                   document_kinds=[], attention=True).items]


@pytest.mark.parametrize("outcome", ["credited", "refused"])
def test_no_212_for_a_sale_credited_in_full_or_refused_and_no_negative_one_after(seeded, storage, config, operator,
                                                                                 operator_client, outcome):
    invoice, draft_id, flow_id = _deposited_sale(storage, config, operator, operator_client)
    [collected] = PaymentOrder.select().where(PaymentOrder.invoice == invoice.id)
    if outcome == "credited":
        with transaction():
            corrections.credit_in_full(invoice_number=invoice.number, reason="erreur de prix", user_id=None,
                                       config=booted_config())
    else:
        operator.control(f"flows/{flow_id}/lifecycle", {"code": 210, "reason": "MONTANTTOTAL_ERR"})
        polling.run_pass(polling.start_pass_if_due(1), client=operator_client, storage=storage)
        assert Transmission.get_by_id(draft_id).lifecycle_code == 210
    bank_settlement.settle(collected.id, booked_on=date(2026, 12, 3))
    polling.run_pass(polling.start_pass_if_due(1), client=operator_client, storage=storage)
    assert operator.flows(flow_type="CustomerInvoiceLC") == []
    assert PaymentReport.select().where(PaymentReport.invoice_number == invoice.number).count() == 0


def test_a_209_clears_a_208_from_the_attention_list(seeded, storage, config, operator, operator_client):
    _, draft_id, flow_id = _deposited_sale(storage, config, operator, operator_client)
    operator.control(f"flows/{flow_id}/lifecycle", {"code": 208, "reason": "bon de commande manquant"})
    polling.run_pass(polling.start_pass_if_due(1), client=operator_client, storage=storage)
    assert Transmission.get_by_id(draft_id).lifecycle_code == 208 and draft_id in _attention()
    operator.control(f"flows/{flow_id}/lifecycle", {"code": 209})
    polling.run_pass(polling.start_pass_if_due(1), client=operator_client, storage=storage)
    transmission = views.transmission_with_history(draft_id)
    assert [(s["code"], s["label"]) for s in transmission.lifecycle] == [(208, "Suspendue"), (209, "Complétée")]
    assert transmission.lifecycle_code == 209 and draft_id not in _attention()
