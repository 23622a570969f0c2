"""Documents e-mailed with their Factur-X PDF, and the distributor's acceptance or contest of each
self-billed invoice (issue 32): one e-mail per document under redelivery with the PDF attached and
readable by `factur-x`; tacit acceptance on day 31 after the e-mail, not 29, and never without an
e-mail; the contest blocks the payout; an admin rejects or adjusts (supplier credit note, corrected
invoice in the gapless series passing every Factur-X check, paid at the corrected amount); the
access matrix; the statuses the platform sends for the distributor, through the operator simulator
over HTTP: 207 at a contest, 210 only when it is settled by an adjustment, none for a rejected one."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy
from pathlib import Path
from types import SimpleNamespace

import pytest
import time_machine
from peewee import IntegrityError

from backend import clock
from backend.billing.documents import mailing
from backend.billing.documents.stored_pdf import STORAGE_CONTEXT
from backend.billing.invoicing.post_invoice_hook import run_post_invoice_hook
from backend.billing.models import AuditEntry, DocumentMailing, Invoice, SelfBilledAcceptance
from backend.billing.self_billing import acceptance, resolution, scheduler
from backend.db import database
from backend.documents.formatting import format_euros
from backend.einvoicing import decision_reports, lifecycle, views
from backend.einvoicing.models import DecisionReport, LifecycleEvent, Transmission
from backend.einvoicing.operator_client import OdpClient
from backend.email.messages import EmailMessage, EmailNotSent, deliver_email
from backend.identity.models import BillingProfile
from backend.outbox import OutboxMessage
from tests.billing.documents.facturx_check import check_pdf, extract_xml
from tests.billing.helpers import Market, approved_org, customer_paid
from tests.billing.invoicing.test_post_invoice_hook import platform_config  # noqa: F401 (fixtures)
from tests.billing.self_billing.data import AFTER, Party, admin_headers, collected, sign_mandate
from tests.einvoicing.conftest import CLIENT_ID, CLIENT_SECRET, ENTITY_ID, operator  # noqa: F401 (fixture)
from tests.factories import add_member, make_user, signed_in

SENT = datetime(2026, 12, 22, 10, 0, tzinfo=UTC)  # the self-billed invoice's e-mail is delivered then
DAY = timedelta(days=1)


@pytest.fixture
def settled(platform_config, storage, seeded):  # noqa: F811
    """A reservation self-billed for 1,000.00 EUR excluding tax (its sale collected), its PDF stored."""
    distributor = Party("distributor")
    industrial = approved_org("industrial")
    sign_mandate(distributor.organization)
    reservation = collected(Market(), industrial, distributor.organization)
    customer_paid(reservation.id)
    with clock.frozen_at(AFTER):
        assert scheduler.self_bill_due_reservations(config=platform_config)["issued"] == 1
    invoice = Invoice.get(Invoice.reservation_id == reservation.id, Invoice.kind == "supplier_self_billed")
    run_post_invoice_hook(invoice.id, storage=storage, config=platform_config)
    return SimpleNamespace(reservation=reservation, distributor=distributor, industrial=industrial,
                           invoice=Invoice.get_by_id(invoice.id))


def deliver(invoice: Invoice, storage, config) -> list[str]:
    """Mail the document and deliver its e-mails (as the two actors do); their ids."""
    mailing.mail_document(invoice.id, storage=storage)
    ids = list(DocumentMailing.get_by_id(invoice.id).email_message_ids)
    for email_id in ids:
        assert deliver_email(email_id, config=config, storage=storage) is True
    return ids


def eml(config, email_id: str):
    (path,) = (Path(config.data_dir) / "mail").glob(f"*-{email_id}.eml")
    return message_from_bytes(path.read_bytes(), policy=policy.default)


def acceptance_path(invoice: Invoice, action: str = "acceptance") -> str:
    return f"/api/billing/self-billed/{invoice.number}/{action}"


def payout(client, reservation, key: str, **body):
    return client.simulate_post(f"/api/admin/billing/reservations/{reservation.id}/payout",
                                headers={**admin_headers(), "Idempotency-Key": key}, json=body or None)


def test_a_document_is_emailed_once_with_its_facturx_pdf(settled, storage, platform_config):  # noqa: F811
    invoice = settled.invoice
    def hooked() -> int:
        return sum(row.args == [invoice.id] for row in
                   OutboxMessage.select().where(OutboxMessage.actor_name == "mail_invoice_document"))

    assert hooked() == 1
    (email_id,) = deliver(invoice, storage, platform_config)
    assert mailing.mail_document(invoice.id, storage=storage) is None  # a redelivered job sends nothing more
    run_post_invoice_hook(invoice.id, storage=storage, config=platform_config)
    assert hooked() == 1  # a second hook does not queue it again
    assert deliver_email(email_id, config=platform_config, storage=storage) is False
    assert EmailMessage.select().where(EmailMessage.template == "self_billed_document",
                                       EmailMessage.to_address == settled.distributor.user.email).count() == 1

    message = eml(platform_config, email_id)
    assert message["To"] == settled.distributor.user.email and invoice.number in message["Subject"]
    body = message.get_body(("plain",)).get_content()
    assert invoice.number in body and f"{format_euros(120_000)} TTC" in body
    assert "30 jours" in body and f"/api/billing/self-billed/{invoice.number}/contest" in body
    assert "token" not in body.lower() and "session" not in body.lower()
    (attachment,) = list(message.iter_attachments())
    assert (attachment.get_filename(), attachment.get_content_type()) == (f"{invoice.number}.pdf", "application/pdf")
    pdf = attachment.get_content()
    assert pdf == storage.read_bytes(STORAGE_CONTEXT, invoice.pdf_storage_key)
    assert f"<ram:ID>{invoice.number}</ram:ID>".encode() in extract_xml(pdf)  # what the factur-x package reads


def test_the_sale_goes_to_the_billing_email_and_says_what_is_due(settled, storage, platform_config,  # noqa: F811
                                                                 operator, operator_client):  # noqa: F811
    sale = Invoice.get(Invoice.reservation_id == settled.reservation.id, Invoice.kind == "platform_sale")
    deposited(sale, storage, platform_config, operator, operator_client)  # its copy goes once the deposit is accepted
    assert mailing.mail_document(sale.id, storage=storage) is None  # no billing e-mail, no manager: nobody
    assert not DocumentMailing.select().where(DocumentMailing.invoice_id == sale.id).exists()
    BillingProfile.update(billing_email="compta@industriel.example").where(
        BillingProfile.organization == settled.industrial.id).execute()
    (email_id,) = deliver(sale, storage, platform_config)
    message = eml(platform_config, email_id)
    assert message["To"] == "compta@industriel.example"
    body = message.get_body(("plain",)).get_content()
    # Fixed at issue: recorded paid with the invoice, but no money received then; never "Réglée".
    assert "Réglée" not in body and "Date d'échéance" in body
    assert f"Ce PDF est une copie de la facture électronique {sale.number}" in body
    (attachment,) = list(message.iter_attachments())
    assert f"<ram:ID>{sale.number}</ram:ID>".encode() in extract_xml(attachment.get_content())


def test_tacit_acceptance_on_day_31_after_the_email_not_29(client, settled, storage, platform_config, log_lines):  # noqa: F811
    invoice = settled.invoice
    with time_machine.travel(SENT + 40 * DAY, tick=False):  # never e-mailed: no deadline, never tacit
        assert acceptance.record_tacit_acceptances() == 0
        assert acceptance.acceptance_of(invoice_number=invoice.number, organization_id=None).deadline is None
    with time_machine.travel(SENT, tick=False):
        deliver(invoice, storage, platform_config)
        answer = client.simulate_get(acceptance_path(invoice), headers=settled.distributor.headers)
    assert answer.status_code == 200, answer.json
    assert answer.json["data"] == {
        "invoiceNumber": invoice.number, "status": "pending", "emailedAt": "2026-12-22T10:00:00.000Z",
        "deadline": "2027-01-21T10:00:00.000Z", "decidedAt": None, "decidedByUserId": None, "contest": None}
    with time_machine.travel(SENT + 29 * DAY, tick=False):
        assert acceptance.record_tacit_acceptances() == 0
    with time_machine.travel(SENT + 31 * DAY, tick=False):
        assert acceptance.record_tacit_acceptances() == 1
        assert acceptance.record_tacit_acceptances() == 0  # once
        late = client.simulate_post(acceptance_path(invoice, "contest"), headers=settled.distributor.headers,
                                    json={"reason": "Trop tard"})
    assert late.status_code == 409 and late.json["error"]["details"]["reason"] == "already_tacitly_accepted"
    row = SelfBilledAcceptance.get_by_id(invoice.id)
    assert (row.status, row.decided_at) == ("tacitly_accepted", SENT + 31 * DAY)
    audit = AuditEntry.get(AuditEntry.invoice_id == invoice.id)
    assert audit.action == "billing.supplier.self_billing.tacitly_accepted"
    assert "billing.supplier.self_billing.tacitly_accepted" in [x["scope"] for x in log_lines()]
    assert payout(client, settled.reservation, "after-tacit").status_code == 200


def test_the_contest_closes_at_the_deadline_and_an_acceptance_is_final(
        client, settled, storage, platform_config):  # noqa: F811
    invoice, headers = settled.invoice, settled.distributor.headers
    with time_machine.travel(SENT, tick=False):
        deliver(invoice, storage, platform_config)
    with time_machine.travel(SENT + 30 * DAY, tick=False):  # the pass has not run yet: the delay is over anyway
        closed = client.simulate_post(acceptance_path(invoice, "contest"), headers=settled.distributor.headers,
                                      json={"reason": "Montant erroné"})
    assert closed.status_code == 409 and closed.json["error"]["details"]["reason"] == "contestation_closed"
    early = payout(client, settled.reservation, "early")
    assert early.status_code == 409 and early.json["error"]["details"]["reason"] == "self_billing_not_accepted"
    accepted = client.simulate_post(acceptance_path(invoice, "accept"), headers=headers)
    assert accepted.status_code == 200 and accepted.json["data"]["status"] == "accepted"
    assert accepted.json["data"]["decidedByUserId"] == settled.distributor.user.id
    again = client.simulate_post(acceptance_path(invoice, "accept"), headers=headers)
    assert again.status_code == 409 and again.json["error"]["details"]["reason"] == "already_accepted"
    with pytest.raises(IntegrityError), database.atomic():  # the database keeps a decision as it was made
        SelfBilledAcceptance.update(status="pending").where(SelfBilledAcceptance.invoice_id == invoice.id).execute()
    assert payout(client, settled.reservation, "accepted").status_code == 200


def test_access_matrix(client, settled):
    invoice = settled.invoice
    contest = acceptance_path(invoice, "contest")
    other = Party("distributor")
    assert client.simulate_get(acceptance_path(invoice), headers=other.headers).status_code == 404
    assert client.simulate_post(contest, headers=other.headers, json={"reason": "x"}).status_code == 404
    assert client.simulate_post(contest, headers=Party("industrial").headers, json={"reason": "x"}).status_code == 403
    plain = make_user()
    add_member(plain, settled.distributor.organization, "member")
    assert client.simulate_post(contest, headers=signed_in(plain, settled.distributor.organization),
                                json={"reason": "x"}).status_code == 403
    headers = settled.distributor.headers
    for reason in ("", "x" * 2001):
        refused = client.simulate_post(contest, headers=headers, json={"reason": reason})
        assert refused.status_code == 400 and refused.json["error"]["code"] == "VALIDATION_ERROR"
    blank = client.simulate_post(contest, headers=headers, json={"reason": "   "})
    assert blank.status_code == 400
    billing = make_user()
    add_member(billing, settled.distributor.organization, "billing")
    contested = client.simulate_post(contest, headers=signed_in(billing, settled.distributor.organization),
                                     json={"reason": "x" * 2000})
    assert contested.status_code == 200 and contested.json["data"]["status"] == "contested"
    resolve = f"/api/admin/billing/self-billed/{invoice.number}/resolve"
    assert client.simulate_post(resolve, headers=headers, json={"decision": "reject", "note": "n"}).status_code == 403
    above = client.simulate_post(resolve, headers=admin_headers(),
                                 json={"decision": "adjust", "note": "Prix corrigé", "amountCents": 100_001})
    assert above.status_code == 409, above.json
    assert above.json["error"]["details"]["reason"] == "amount_above_store_share"
    assert above.json["error"]["details"]["maximumCents"] == 100_000
    assert client.simulate_post(resolve, headers=admin_headers(),
                                json={"decision": "adjust", "note": "Prix corrigé"}).status_code == 400


@pytest.fixture
def operator_client(operator):  # noqa: F811
    return OdpClient(base_url=operator.url, token_url=operator.token_url, client_id=CLIENT_ID,
                     client_secret=CLIENT_SECRET, entity_id=ENTITY_ID, flow_mode="Sandbox", read_timeout=2.0,
                     sleep=lambda _seconds: None)


def deposited(invoice: Invoice, storage, config, operator, operator_client) -> None:  # noqa: F811
    """The self-billed invoice's transmission made, deposited and acknowledged by the operator."""
    run_post_invoice_hook(invoice.id, storage=storage, config=replace(config, einvoicing_self_billing_enabled=True))
    transmission = Transmission.get(Transmission.invoice_number == invoice.number)
    flow_id = lifecycle.dispatch(transmission.id, client=operator_client, storage=storage).provider_flow_id
    operator.act(flow_id, "ok")
    assert lifecycle.resync(transmission.id, client=operator_client).status == "acknowledged"


def test_the_directory_check_of_a_self_billed_invoice_looks_up_the_distributor(
        settled, storage, platform_config, operator, operator_client):  # noqa: F811
    invoice = settled.invoice
    run_post_invoice_hook(invoice.id, storage=storage,
                          config=replace(platform_config, einvoicing_self_billing_enabled=True))
    transmission = Transmission.get(Transmission.invoice_number == invoice.number)
    distributor_siren = invoice.issuer["siren"]
    operator.control("directory", {"siren": distributor_siren, "registered": False})
    held = lifecycle.dispatch(transmission.id, client=operator_client, storage=storage)
    assert (held.status, held.last_error_code) == ("failed", "EINVOICE_RECIPIENT_UNKNOWN")
    assert f"the distributor's (it receives its self-billed invoice) SIREN {distributor_siren}" \
        in held.last_error_message
    assert operator.flows(invoice.number) == []
    operator.control("directory", {"siren": distributor_siren, "registered": True})
    operator.control("directory", {"siren": "732829320", "registered": False})  # the platform, the buyer
    with clock.frozen_at(clock.now() + timedelta(days=1, seconds=1)):  # the cached answer expired
        assert lifecycle.retry(transmission.id, client=operator_client, storage=storage).status == "sent"


def test_a_rejected_contest_lets_the_payout_go(client, settled, log_lines, storage, platform_config,  # noqa: F811
                                               operator, operator_client):  # noqa: F811
    invoice = settled.invoice
    deposited(invoice, storage, platform_config, operator, operator_client)
    contested = client.simulate_post(acceptance_path(invoice, "contest"), headers=settled.distributor.headers,
                                     json={"reason": "Le magasin était fermé deux jours"})
    assert contested.status_code == 200
    assert contested.json["data"]["contest"]["reason"] == "Le magasin était fermé deux jours"
    for key, body in (("blocked", {}), ("blocked-early", {"reason": "urgence"})):
        blocked = payout(client, settled.reservation, key, **body)
        assert blocked.status_code == 409 and blocked.json["error"]["details"]["reason"] == "self_billing_contested"
    listed = client.simulate_get("/api/admin/billing/self-billed/contested", headers=admin_headers(),
                                 params={"search": invoice.number})
    assert [item["invoiceNumber"] for item in listed.json["data"]["items"]] == [invoice.number]
    resolved = client.simulate_post(f"/api/admin/billing/self-billed/{invoice.number}/resolve", headers=admin_headers(),
                                    json={"decision": "reject", "note": "Fermeture non signalée en incident"})
    assert resolved.status_code == 200, resolved.json
    data = resolved.json["data"]
    assert (data["creditNoteNumber"], data["correctedInvoiceNumber"]) == (None, None)
    assert data["acceptance"]["contest"]["resolution"]["decision"] == "rejected"
    told = EmailMessage.get(EmailMessage.template == "self_billing_contest_rejected")
    assert told.to_address == settled.distributor.user.email and "Fermeture non signalée" in told.body_text
    assert "écrivez à" in told.body_text or "depuis votre espace" in told.body_text  # where to answer
    assert not told.subject.startswith(" ")
    # The 207 sent in its name was told to the distributor, with its coded reason.
    [status_told] = EmailMessage.select().where(EmailMessage.template == "self_billing_status_sent")
    assert status_told.to_address == settled.distributor.user.email
    assert "207 En litige" in status_told.subject and "NON_CONFORME" in status_told.body_text
    again = client.simulate_post(f"/api/admin/billing/self-billed/{invoice.number}/resolve", headers=admin_headers(),
                                 json={"decision": "reject", "note": "encore"})
    assert again.status_code == 409 and again.json["error"]["details"]["reason"] == "no_open_contest"
    paid = payout(client, settled.reservation, "after-reject")
    assert paid.status_code == 200 and paid.json["data"]["amountExclTaxCents"] == 100_000
    assert "billing.supplier.self_billing.contest_rejected" in [x["scope"] for x in log_lines()]
    # The contest was a dispute (207, coded); its rejection refuses nothing: no 210.
    assert decision_reports.send_due(client=operator_client) == {"sent": 1, "failed": 0}
    assert [flow["statusReport"]["code"] for flow in operator.flows(flow_type="CustomerInvoiceLC")] == [207]
    assert [row.code for row in DecisionReport.select().where(DecisionReport.invoice_number == invoice.number)] == [207]
    # The dispute is settled: off the attention list, though its latest status stays 207.
    transmission = Transmission.get(Transmission.invoice_number == invoice.number)
    assert transmission.lifecycle_code == 207
    assert not Transmission.select().where(Transmission.id == transmission.id, views.needs_attention()).exists()


def test_an_adjusted_contest_pays_the_corrected_invoice(client, settled, storage, platform_config, log_lines,  # noqa: F811
                                                        operator, operator_client):  # noqa: F811
    invoice = settled.invoice
    sb_config = replace(platform_config, einvoicing_self_billing_enabled=True)
    run_post_invoice_hook(invoice.id, storage=storage, config=sb_config)  # its transmission draft
    assert client.simulate_post(acceptance_path(invoice, "contest"), headers=settled.distributor.headers,
                                json={"reason": "Deux jours de fermeture"}).status_code == 200
    (disputed,) = DecisionReport.select().where(DecisionReport.invoice_number == invoice.number)
    assert (disputed.code, disputed.reason_code, disputed.reason, disputed.status) == (
        207, "NON_CONFORME", "Deux jours de fermeture", "pending")
    assert LifecycleEvent.select().where(LifecycleEvent.code == 210).count() == 0  # a dispute, not a refusal
    assert decision_reports.send_due(client=operator_client) == {"sent": 0, "failed": 0}  # not acknowledged
    transmission = Transmission.get(Transmission.invoice_number == invoice.number)
    flow_id = lifecycle.dispatch(transmission.id, client=operator_client, storage=storage).provider_flow_id
    operator.act(flow_id, "ok")
    assert lifecycle.resync(transmission.id, client=operator_client).status == "acknowledged"
    assert decision_reports.send_due(client=operator_client) == {"sent": 1, "failed": 0}
    assert DecisionReport.get_by_id(disputed.id).status == "sent"
    [dispute] = operator.flows(f"{invoice.number}:207")
    assert (dispute["statusReport"]["code"], dispute["statusReport"]["reasonCode"],
            dispute["statusReport"]["invoiceTypeCode"], dispute["statusReport"]["issuerRole"]) == (
        207, "NON_CONFORME", "389", "SE")  # in the distributor's name, the seller of a self-billed invoice

    # The service the route calls, with the platform's legal identity the documents print.
    resolved = resolution.resolve(invoice_number=invoice.number, decision="adjust", note="Deux jours déduits",
                                  amount_cents=85_714, user_id=None, config=platform_config)
    credit = Invoice.get(Invoice.number == resolved.credit_note_number)
    corrected = Invoice.get(Invoice.number == resolved.corrected_invoice_number)
    assert (credit.kind, credit.credited_invoice_id, credit.amount_excl_tax_cents) == (
        "supplier_credit_note", invoice.id, 100_000)
    assert (corrected.kind, corrected.series, corrected.sequence) == (
        "supplier_self_billed", invoice.series, invoice.sequence + 1)  # the series stays gapless
    assert (corrected.amount_excl_tax_cents, corrected.issuer_organization_id) == (
        85_714, invoice.issuer_organization_id)
    assert Invoice.get_by_id(invoice.id).status == "credited"
    assert resolved.acceptance.contest.resolution.corrected_invoice_number == corrected.number
    assert SelfBilledAcceptance.get_by_id(corrected.id).status == "pending"  # its own 30 days
    for document in (credit, corrected):
        run_post_invoice_hook(document.id, storage=storage, config=platform_config)
        check_pdf(storage.read_bytes(STORAGE_CONTEXT, Invoice.get_by_id(document.id).pdf_storage_key))
        assert mailing.mail_document(document.id, storage=storage) is not None  # both e-mailed
    audit = AuditEntry.get(AuditEntry.action == "billing.supplier.self_billing.adjusted")
    assert audit.details["correctedInvoiceNumber"] == corrected.number and audit.reason == "Deux jours déduits"
    adjusted = [x for x in log_lines() if x["scope"] == "billing.supplier.self_billing.adjusted"]
    assert any(x.get("correctedInvoiceNumber") == corrected.number for x in adjusted)

    assert client.simulate_post(acceptance_path(corrected, "accept"),
                                headers=settled.distributor.headers).status_code == 200
    paid = payout(client, settled.reservation, "corrected")
    assert paid.status_code == 200, paid.json
    assert (paid.json["data"]["invoiceNumber"], paid.json["data"]["amountExclTaxCents"],
            paid.json["data"]["amountCents"]) == (corrected.number, 85_714, 102_857)
    # The adjustment refused the contested invoice: its 210, coded, reached the operator.
    assert decision_reports.send_due(client=operator_client) == {"sent": 1, "failed": 0}
    [refusal] = operator.flows(f"{invoice.number}:210")
    assert (refusal["statusReport"]["code"], refusal["statusReport"]["reasonCode"],
            refusal["statusReport"]["reason"]) == (210, "NON_CONFORME", "Deux jours déduits")


def test_a_missing_pdf_fails_the_delivery_which_is_retried(settled, storage, platform_config):  # noqa: F811
    """The attachment is a reference read when the e-mail is sent: never sent without its file."""
    invoice = settled.invoice
    mailing.mail_document(invoice.id, storage=storage)
    (email_id,) = DocumentMailing.get_by_id(invoice.id).email_message_ids
    pdf = storage.read_bytes(STORAGE_CONTEXT, invoice.pdf_storage_key)
    storage.delete(STORAGE_CONTEXT, invoice.pdf_storage_key)
    with pytest.raises(EmailNotSent):
        deliver_email(email_id, config=platform_config, storage=storage)
    assert EmailMessage.get_by_id(email_id).status == "queued"  # the actor retries it
    storage.put_bytes(STORAGE_CONTEXT, invoice.pdf_storage_key, pdf, "application/pdf")
    assert deliver_email(email_id, config=platform_config, storage=storage) is True
