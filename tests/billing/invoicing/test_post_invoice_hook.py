"""The post-invoice hook (spec C steps 1-5): the PDF stored and recorded, the transmission draft
only after it and only for a domestic flow, self-billed gating, idempotent under a duplicated and
under two concurrent messages, no draft (and a reconciliation gap) when the PDF failed, never
raising into the issuing flow."""

from __future__ import annotations

import hashlib
import threading
from datetime import UTC, datetime, timedelta

import pytest
from peewee import DatabaseError

from backend import clock
from backend.billing.documents.stored_pdf import STORAGE_CONTEXT
from backend.billing.invoicing.invoices import InvoiceDraft, Line, issue_invoice
from backend.billing.invoicing.post_invoice_hook import run_post_invoice_hook
from backend.billing.models import Invoice, InvoiceKind
from backend.billing.vat import amount_incl_tax_cents
from backend.db import database, transaction
from backend.einvoicing import reconciliation
from backend.einvoicing.models import Transmission
from backend.identity.models import BillingProfile
from storage import StorageError, build_storage
from tests.billing.documents.facturx_check import check_pdf, extract_xml
from tests.billing.helpers import approved_org

START = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.fixture
def platform_config(config):
    """The platform's legal identity and operator access point, as a deployment sets them."""
    from dataclasses import replace

    return replace(config, platform_legal_company_name="Vitrine SAS", platform_legal_siret="73282932000074",
                   platform_legal_vat_number="FR44732829320", platform_legal_street="8 avenue de l'Opéra",
                   platform_legal_postal_code="75001", platform_legal_city="Paris", platform_legal_country="FR",
                   platform_legal_iban="FR7630006000011234567890189", odp_seller_ap="732829320_FACTURES",
                   odp_seller_ap_scheme="0225", platform_country_code="FR")


def issue(kind: InvoiceKind, *, issuer: str | None, customer: str | None, config, cents: int = 100_000,
          credited: Invoice | None = None, paid: bool = False) -> Invoice:
    with transaction():
        return issue_invoice(InvoiceDraft(
            kind=kind, lines=(Line("Emplacement Tête de gondole, Supermarché du Lac, du 01/12/2026 au 14/12/2026",
                                   cents),),
            issuer_organization_id=issuer, customer_organization_id=customer, service_starts_at=START,
            service_ends_at=START + timedelta(days=14), credited_invoice_id=credited.id if credited else None,
            vat_rate_bps=credited.vat_rate_bps if credited else None, credited_before_cents=0 if credited else None,
            reason="remboursement" if credited else None, paid=paid,
        ), config=config)


def transmissions(number: str) -> list[Transmission]:
    return list(Transmission.select().where(Transmission.invoice_number == number))


def test_sale_gets_its_pdf_then_a_domestic_draft(storage, seeded, platform_config):
    industrial = approved_org("industrial")
    invoice = issue(InvoiceKind.PLATFORM_SALE, issuer=None, customer=industrial.id, config=platform_config, paid=True)
    outcome = run_post_invoice_hook(invoice.id, storage=storage, config=platform_config)
    key = f"billing/invoices/{invoice.number}.pdf"
    assert outcome.pdf_storage_key == key and not outcome.idempotent and outcome.skipped is None
    assert Invoice.get_by_id(invoice.id).pdf_storage_key == key
    xml = check_pdf(storage.read_bytes(STORAGE_CONTEXT, key))
    assert b"<ram:TypeCode>380</ram:TypeCode>" in xml
    (transmission,) = transmissions(invoice.number)
    assert str(transmission.id) == outcome.transmission_id
    assert transmission.status == "pending_dispatch" and transmission.document_pdf_key == key
    assert transmission.idempotency_key == f"{invoice.number}:invoice:fr_domestic_b2b"
    assert transmission.amount_incl_tax_cents == amount_incl_tax_cents(invoice.amount_excl_tax_cents,
                                                                       invoice.vat_rate_bps)


def test_a_duplicated_message_answers_the_same_transmission(storage, seeded, platform_config, log_lines):
    industrial = approved_org("industrial")
    invoice = issue(InvoiceKind.PLATFORM_SALE, issuer=None, customer=industrial.id, config=platform_config, paid=True)
    first = run_post_invoice_hook(invoice.id, storage=storage, config=platform_config)
    pdf = storage.read_bytes(STORAGE_CONTEXT, first.pdf_storage_key)
    second = run_post_invoice_hook(invoice.id, storage=storage, config=platform_config)
    assert second.idempotent and second.transmission_id == first.transmission_id
    assert len(transmissions(invoice.number)) == 1
    assert storage.read_bytes(STORAGE_CONTEXT, second.pdf_storage_key) == pdf
    created = [line for line in log_lines() if line["scope"] == "billing.einvoicing.transmission_draft_created"]
    assert [line["idempotent"] for line in created] == [False, True]


def test_credit_note_is_a_credit_note_document_naming_its_invoice(storage, seeded, platform_config):
    industrial = approved_org("industrial")
    sale = issue(InvoiceKind.PLATFORM_SALE, issuer=None, customer=industrial.id, config=platform_config, paid=True)
    credit = issue(InvoiceKind.PLATFORM_CREDIT_NOTE, issuer=None, customer=industrial.id, config=platform_config,
                   cents=30_000, credited=sale)
    outcome = run_post_invoice_hook(credit.id, storage=storage, config=platform_config)
    xml = check_pdf(storage.read_bytes(STORAGE_CONTEXT, outcome.pdf_storage_key))
    assert b"<ram:TypeCode>381</ram:TypeCode>" in xml
    assert f"<ram:IssuerAssignedID>{sale.number}</ram:IssuerAssignedID>".encode() in xml
    (transmission,) = transmissions(credit.number)
    assert transmission.document_kind == "credit_note"


def test_self_billed_drafts_are_gated(storage, seeded, platform_config, log_lines):
    from dataclasses import replace

    distributor = approved_org("distributor")
    invoice = issue(InvoiceKind.SUPPLIER_SELF_BILLED, issuer=distributor.id, customer=None, config=platform_config)
    disabled = run_post_invoice_hook(invoice.id, storage=storage, config=platform_config)
    assert disabled.skipped == "self_billing_disabled" and disabled.pdf_storage_key  # the PDF is always made
    xml = check_pdf(storage.read_bytes(STORAGE_CONTEXT, disabled.pdf_storage_key))
    assert b"<ram:TypeCode>389</ram:TypeCode>" in xml and b"Autofacturation" in xml
    enabled = replace(platform_config, einvoicing_self_billing_enabled=True)
    no_mandate = run_post_invoice_hook(invoice.id, storage=storage, config=enabled)  # no mandate table yet
    assert no_mandate.skipped == "no_signed_mandate"
    assert transmissions(invoice.number) == []
    skipped = [line["reason"] for line in log_lines()
               if line["scope"] == "billing.einvoicing.transmission_draft_skipped"]
    assert skipped == ["self_billing_disabled", "no_signed_mandate"]
    signed = run_post_invoice_hook(invoice.id, storage=storage, config=enabled,
                                   mandate_signed=lambda organization_id: organization_id == distributor.id)
    assert signed.transmission_id and not signed.idempotent
    (transmission,) = transmissions(invoice.number)
    assert transmission.idempotency_key == f"{invoice.number}:invoice:fr_domestic_b2b"
    created = [line for line in log_lines() if line["scope"] == "billing.supplier.self_billing.transmission_created"]
    assert [line["transmissionId"] for line in created] == [str(transmission.id)]


def test_no_transmission_when_the_pdf_failed_and_reconciliation_sees_it(storage, seeded, platform_config, log_lines):
    class RefusingStorage(type(storage)):
        def put_stream(self, *args, **kwargs):
            raise StorageError("bucket unavailable")

    broken = RefusingStorage.__new__(RefusingStorage)
    broken.__dict__.update(storage.__dict__)
    industrial = approved_org("industrial")
    invoice = issue(InvoiceKind.PLATFORM_SALE, issuer=None, customer=industrial.id, config=platform_config, paid=True)
    outcome = run_post_invoice_hook(invoice.id, storage=broken, config=platform_config)
    assert outcome.skipped == "pdf_failed" and outcome.pdf_storage_key is None
    assert Invoice.get_by_id(invoice.id).pdf_storage_key is None and transmissions(invoice.number) == []
    scopes = [line["scope"] for line in log_lines()]
    assert "billing.invoice.pdf_generation_failed" in scopes
    assert "billing.einvoicing.transmission_draft_skipped" in scopes
    with clock.frozen_at(invoice.issued_at + timedelta(minutes=16)):
        assert reconciliation.snapshot(platform_config)["missingTransmission"] == 1
    later = run_post_invoice_hook(invoice.id, storage=storage, config=platform_config)  # the retry heals it
    assert later.transmission_id and len(transmissions(invoice.number)) == 1
    with clock.frozen_at(invoice.issued_at + timedelta(minutes=16)):
        assert reconciliation.snapshot(platform_config)["missingTransmission"] == 0


def test_the_hook_never_raises(storage, seeded, platform_config, log_lines):
    assert run_post_invoice_hook("00000000-0000-0000-0000-000000000000", storage=storage,
                                 config=platform_config) is None
    industrial = approved_org("industrial")
    BillingProfile.update(country="1X").where(BillingProfile.organization == industrial.id).execute()
    invoice = issue(InvoiceKind.PLATFORM_SALE, issuer=None, customer=industrial.id, config=platform_config, paid=True)
    outcome = run_post_invoice_hook(invoice.id, storage=storage, config=platform_config)  # an unusable country
    assert outcome.skipped == "einvoicing_failed" and outcome.pdf_storage_key
    assert [line["level"] for line in log_lines()
            if line["scope"] == "billing.einvoicing.transmission_draft_failed"] == ["error"]


def test_export_buyer_gets_a_pdf_and_an_e_reporting_draft(storage, seeded, platform_config):
    industrial = approved_org("industrial")
    BillingProfile.update(country="CH").where(BillingProfile.organization == industrial.id).execute()
    invoice = issue(InvoiceKind.PLATFORM_SALE, issuer=None, customer=industrial.id, config=platform_config, paid=True)
    outcome = run_post_invoice_hook(invoice.id, storage=storage, config=platform_config)
    assert outcome.transmission_id and outcome.pdf_storage_key
    [transmission] = transmissions(invoice.number)
    assert (transmission.flow_type, transmission.processing_rule) == ("export_b2b", "B2BInt")


@pytest.mark.committed
def test_two_concurrent_messages_make_one_transmission(config, platform_config, broker):
    storage = build_storage(config)
    with database.connection_context():
        from backend.documents.seeding import seed_default_versions

        seed_default_versions(storage)
        industrial = approved_org("industrial")
        invoice = issue(InvoiceKind.PLATFORM_SALE, issuer=None, customer=industrial.id, config=platform_config,
                        paid=True)
    outcomes, barrier = [], threading.Barrier(2)

    def hook() -> None:
        with database.connection_context():
            barrier.wait(timeout=30)
            outcomes.append(run_post_invoice_hook(invoice.id, storage=storage, config=platform_config))

    threads = [threading.Thread(target=hook) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(outcomes) == 2 and all(outcome is not None for outcome in outcomes)
    assert sorted(outcome.idempotent for outcome in outcomes) == [False, True]
    assert len({outcome.transmission_id for outcome in outcomes}) == 1
    with database.connection_context():
        assert len(transmissions(invoice.number)) == 1
        assert Invoice.get_by_id(invoice.id).pdf_storage_key == f"billing/invoices/{invoice.number}.pdf"
    check_pdf(storage.read_bytes(STORAGE_CONTEXT, f"billing/invoices/{invoice.number}.pdf"))


def test_vitrine_billing_invoice_pdf_writes_the_stored_pdf(seeded, platform_config, tmp_path, capsys):
    from ops.cli import main

    industrial = approved_org("industrial")
    invoice = issue(InvoiceKind.PLATFORM_SALE, issuer=None, customer=industrial.id, config=platform_config, paid=True)
    target = tmp_path / "facture.pdf"
    assert main(["billing", "invoice-pdf", invoice.number, "-o", str(target)]) == 0  # missing: generated first
    pdf = target.read_bytes()
    assert f"{target}: {len(pdf)} bytes, sha256 " in capsys.readouterr().out
    check_pdf(pdf, br_fr=False)  # the CLI's settings carry no platform identity: XSD and EN 16931 rules
    assert Invoice.get_by_id(invoice.id).pdf_storage_key == f"billing/invoices/{invoice.number}.pdf"
    again = tmp_path / "again.pdf"
    assert main(["billing", "invoice-pdf", invoice.number, "-o", str(again), "--regenerate"]) == 0
    assert again.read_bytes() == pdf
    assert main(["billing", "invoice-pdf", "FAC-RES-1999-000001", "-o", str(again)]) == 1


@pytest.mark.committed
def test_issuing_an_invoice_runs_the_hook_in_the_worker(config, worker, broker):
    storage = build_storage(config)
    with database.connection_context():
        from backend.documents.seeding import seed_default_versions

        seed_default_versions(storage)
        industrial = approved_org("industrial")
        invoice = issue(InvoiceKind.PLATFORM_SALE, issuer=None, customer=industrial.id, config=config, paid=True)
    deadline = datetime.now(UTC) + timedelta(seconds=120)
    while datetime.now(UTC) < deadline:
        with database.connection_context():
            if transmissions(invoice.number):
                break
        threading.Event().wait(0.2)
    with database.connection_context():
        assert Invoice.get_by_id(invoice.id).pdf_storage_key == f"billing/invoices/{invoice.number}.pdf"
        (transmission,) = transmissions(invoice.number)
        assert transmission.document_pdf_key == f"billing/invoices/{invoice.number}.pdf"
    extract_xml(storage.read_bytes(STORAGE_CONTEXT, f"billing/invoices/{invoice.number}.pdf"))


def test_download_answers_the_stored_pdf_after_the_hook_ran(client, storage, seeded, platform_config):
    from tests.factories import add_member, make_user, signed_in

    industrial = approved_org("industrial")
    user = make_user()
    add_member(user, industrial, role="billing")
    invoice = issue(InvoiceKind.PLATFORM_SALE, issuer=None, customer=industrial.id, config=platform_config, paid=True)
    path = f"/api/billing/invoices/{invoice.number}/download"
    before = client.simulate_get(path, headers=signed_in(user, industrial))
    assert before.status_code == 404 and before.json["error"]["code"] == "BILLING_PDF_NOT_READY"
    outcome = run_post_invoice_hook(invoice.id, storage=storage, config=platform_config)
    after = client.simulate_get(path, headers=signed_in(user, industrial))
    assert after.status_code == 200 and after.headers["content-type"] == "application/pdf"
    assert "attachment" in after.headers["content-disposition"]
    assert after.content == storage.read_bytes(STORAGE_CONTEXT, outcome.pdf_storage_key)
    check_pdf(after.content)


def test_a_stored_pdf_is_recorded_by_its_sha256_and_never_replaced_by_other_bytes(storage, seeded, platform_config,
                                                                                   monkeypatch):
    from backend.billing.documents import stored_pdf
    from backend.billing.documents.render import InvoicePdf
    from backend.errors import Conflict

    industrial = approved_org("industrial")
    invoice = issue(InvoiceKind.PLATFORM_SALE, issuer=None, customer=industrial.id, config=platform_config, paid=True)
    key = stored_pdf.ensure_invoice_pdf(invoice, storage=storage, config=platform_config)
    pdf = storage.read_bytes(STORAGE_CONTEXT, key)
    recorded = Invoice.get_by_id(invoice.id).pdf_sha256
    assert recorded == hashlib.sha256(pdf).hexdigest()
    # the same bytes again: accepted; other bytes (the style changed since): refused, the stored PDF kept
    assert stored_pdf.ensure_invoice_pdf(invoice, storage=storage, config=platform_config, force=True) == key
    monkeypatch.setattr(stored_pdf, "render_invoice_pdf",
                        lambda *args, **kwargs: InvoicePdf(pdf.replace(b"%%EOF", b"%%EOF\n%new"), b"", False))
    with pytest.raises(Conflict) as refused:
        stored_pdf.ensure_invoice_pdf(invoice, storage=storage, config=platform_config, force=True)
    assert refused.value.details["reason"] == "pdf_frozen"
    assert storage.read_bytes(STORAGE_CONTEXT, key) == pdf
    with pytest.raises(DatabaseError, match="never changes"), transaction():
        database.execute_sql("UPDATE billing_invoice SET pdf_sha256 = %s WHERE id = %s", ("0" * 64, invoice.id))


def test_a_regeneration_after_a_template_and_style_change_renders_the_frozen_versions(storage, seeded,
                                                                                     platform_config):
    from backend.billing.documents import stored_pdf
    from backend.billing.documents.invoice_snapshot import snapshot_of_invoice
    from backend.billing.documents.render import render_invoice_pdf
    from backend.documents import versions
    from backend.documents.catalog import PDF_STYLE_KEY, default_style
    from backend.documents.models import Kind

    industrial = approved_org("industrial")
    invoice = issue(InvoiceKind.PLATFORM_SALE, issuer=None, customer=industrial.id, config=platform_config, paid=True)
    assert stored_pdf.frozen_versions(invoice) == (1, 1)  # the published versions at issue, set by the database
    key = stored_pdf.ensure_invoice_pdf(invoice, storage=storage, config=platform_config)
    first = storage.read_bytes(STORAGE_CONTEXT, key)
    # a new style (another colour) and a new invoice template are published after the issue
    template = versions.read_content(storage, versions.require_current_version("invoice", Kind.MARKDOWN))
    for template_key, kind, content in ((PDF_STYLE_KEY, Kind.PDF_CSS, default_style() + "\nh1 { color: #c0392b; }"),
                                        ("invoice", Kind.MARKDOWN, template + "\n\nMerci de votre confiance.")):
        versions.save_draft(template_key=template_key, kind=kind, content=content, actor_user_id=None, storage=storage)
        versions.publish(template_key=template_key, kind=kind, actor_user_id=None)
    current = render_invoice_pdf(snapshot_of_invoice(invoice, platform_config), storage=storage, config=platform_config)
    assert current.content != first  # the current versions would give other bytes
    assert stored_pdf.ensure_invoice_pdf(invoice, storage=storage, config=platform_config, force=True) == key
    assert storage.read_bytes(STORAGE_CONTEXT, key) == first  # byte-identical: rendered with versions 1 and 1
    assert Invoice.get_by_id(invoice.id).pdf_sha256 == hashlib.sha256(first).hexdigest()
    later = issue(InvoiceKind.PLATFORM_SALE, issuer=None, customer=industrial.id, config=platform_config, paid=True)
    assert stored_pdf.frozen_versions(later) == (2, 2)  # the next invoice gets the new ones
    # the runtime role may not update them; the owner is refused by the trigger
    with pytest.raises(DatabaseError, match=r"permission denied|never change"), transaction():
        database.execute_sql("UPDATE billing_invoice SET pdf_style_version = 2 WHERE id = %s", (invoice.id,))
