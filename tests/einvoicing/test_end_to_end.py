"""From a collection to `acknowledged`: the collection issues the sale invoice, the post-invoice
hook stores its Factur-X PDF and creates the draft, the dispatch posts the PDF to the operator
simulator over HTTP, the operator accepts it and a polling pass acknowledges it; the
reconciliation shows it. An EU or export buyer gets no transmission and no missing one."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import timedelta

import pytest

from backend import clock
from backend.billing import collection
from backend.billing.models import Invoice, PaymentMethod
from backend.billing.post_invoice_hook import run_post_invoice_hook
from backend.einvoicing import lifecycle, polling, reconciliation
from backend.einvoicing.models import Transmission, TransmissionSkip
from backend.identity.models import BillingProfile
from tests.billing.helpers import Market, approved_org, booted_config


@pytest.fixture
def seeded(storage):
    from backend.documents.seeding import seed_default_versions

    return seed_default_versions(storage)


def collect_sale(buyer_country: str = "FR") -> Invoice:
    industrial, distributor = approved_org("industrial"), approved_org("distributor")
    BillingProfile.update(country=buyer_country).where(BillingProfile.organization == industrial.id).execute()
    reservation = Market().reservation(industrial, distributor, price_cents=100_000)
    answer = collection.collect(reservation_id=reservation.id, industrial_organization_id=industrial.id,
                                method=PaymentMethod.BANK_TRANSFER, key=f"k-{reservation.id}", user_id=None,
                                config=booted_config())
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


@pytest.mark.parametrize(("country", "flow_type"), [("DE", "eu_intra_b2b"), ("CH", "export_b2b")])
def test_an_eu_or_export_buyer_gets_no_transmission_and_none_missing(seeded, storage, config, country, flow_type):
    invoice = collect_sale(country)
    outcome = run_post_invoice_hook(invoice.id, storage=storage, config=config)
    assert outcome.transmission_id is None and outcome.skipped == "e_reporting_flow"
    assert not Transmission.select().where(Transmission.invoice_number == invoice.number).exists()
    assert TransmissionSkip.get_by_id(invoice.number).flow_type == flow_type
    with clock.frozen_at(clock.now() + timedelta(hours=1)):
        snapshot = reconciliation.snapshot(replace(config))
    assert snapshot["missingTransmission"] == 0


def test_an_invoice_without_its_transmission_is_missing_after_15_minutes(seeded, config):
    collect_sale()  # the hook never ran (a PDF failure): no draft
    with clock.frozen_at(clock.now() + timedelta(minutes=16)):
        snapshot = reconciliation.snapshot(config)
    assert snapshot["missingTransmission"] >= 1
