"""The customer's e-mail of a transmitted document is a copy of the electronic invoice: queued only
once the operator accepted the deposit (through the simulator over HTTP), saying it is a copy and
the deposit's day; never for a rejected deposit; a document that is no electronic invoice (a buyer
abroad: e-reporting data) is e-mailed at once as the invoice itself."""

from __future__ import annotations

import pytest

from backend.billing.documents import mailing
from backend.billing.invoicing.post_invoice_hook import run_post_invoice_hook
from backend.billing.models import DocumentMailing, InvoiceKind
from backend.einvoicing import lifecycle, polling
from backend.einvoicing.models import Transmission
from backend.einvoicing.operator_client import OdpClient
from backend.email.messages import EmailMessage
from backend.identity.models import BillingProfile
from backend.outbox import OutboxMessage
from tests.billing.helpers import approved_org
from tests.billing.invoicing.test_post_invoice_hook import issue, platform_config  # noqa: F401 (fixture)
from tests.einvoicing.conftest import CLIENT_ID, CLIENT_SECRET, ENTITY_ID


@pytest.fixture
def seeded(storage):
    from backend.documents.seeding import seed_default_versions

    return seed_default_versions(storage)


@pytest.fixture
def odp(operator):
    return OdpClient(base_url=operator.url, token_url=operator.token_url, client_id=CLIENT_ID,
                     client_secret=CLIENT_SECRET, entity_id=ENTITY_ID, flow_mode="Sandbox", read_timeout=2.0,
                     sleep=lambda _seconds: None)


def sale(config, *, country: str = "FR"):
    industrial = approved_org("industrial")
    BillingProfile.update(billing_email="compta@client.example", country=country).where(
        BillingProfile.organization == industrial.id).execute()
    return issue(InvoiceKind.PLATFORM_SALE, issuer=None, customer=industrial.id, config=config, paid=True)


def queued_mails(invoice_id: str) -> int:
    return sum(row.args == [invoice_id] for row in
               OutboxMessage.select().where(OutboxMessage.actor_name == "mail_invoice_document"))


def body_of(invoice_id: str) -> str:
    (email_id,) = DocumentMailing.get_by_id(invoice_id).email_message_ids
    return EmailMessage.get_by_id(email_id).body_text


def deposit(invoice, storage, config, operator, odp, action: str) -> Transmission:
    outcome = run_post_invoice_hook(invoice.id, storage=storage, config=config)
    assert outcome.transmission_id
    flow_id = lifecycle.dispatch(outcome.transmission_id, client=odp, storage=storage).provider_flow_id
    assert queued_mails(invoice.id) == 0  # deposited, not accepted yet: no e-mail
    assert mailing.mail_document(invoice.id, storage=storage) is None  # a job run now sends nothing
    operator.act(flow_id, action, message="Destinataire inconnu" if action == "error" else None)
    return lifecycle.resync(outcome.transmission_id, client=odp)


def test_the_copy_goes_once_the_operator_accepted_the_deposit_and_says_so(
        storage, seeded, platform_config, operator, odp):  # noqa: F811
    invoice = sale(platform_config)
    assert deposit(invoice, storage, platform_config, operator, odp, "ok").status == "acknowledged"
    assert queued_mails(invoice.id) == 1
    assert mailing.mail_document(invoice.id, storage=storage) is not None
    body = body_of(invoice.id)
    assert f"Ce PDF est une copie de la facture électronique {invoice.number}, déposée le " in body
    assert "l'original qui fait foi est ce document électronique" in body
    run_post_invoice_hook(invoice.id, storage=storage, config=platform_config)  # a second hook
    assert queued_mails(invoice.id) == 1 and mailing.mail_document(invoice.id, storage=storage) is None


def test_a_deposit_a_polling_pass_finds_accepted_queues_its_copy(
        storage, seeded, platform_config, operator, odp):  # noqa: F811
    invoice = sale(platform_config)
    transmission_id = run_post_invoice_hook(invoice.id, storage=storage, config=platform_config).transmission_id
    operator.act(lifecycle.dispatch(transmission_id, client=odp, storage=storage).provider_flow_id, "ok")
    assert queued_mails(invoice.id) == 0
    polling.run_pass(polling.start_pass_if_due(1), client=odp, storage=storage)  # acknowledges in bulk
    assert Transmission.get_by_id(transmission_id).status == "acknowledged"
    assert queued_mails(invoice.id) == 1


def test_a_rejected_deposit_is_never_emailed(storage, seeded, platform_config, operator, odp):  # noqa: F811
    invoice = sale(platform_config)
    assert deposit(invoice, storage, platform_config, operator, odp, "error").status == "rejected"
    assert queued_mails(invoice.id) == 0
    assert mailing.mail_document(invoice.id, storage=storage) is None  # a stray job sends nothing either
    assert not DocumentMailing.select().where(DocumentMailing.invoice_id == invoice.id).exists()


def test_a_sale_abroad_is_no_electronic_invoice_and_is_emailed_at_once(storage, seeded, platform_config):  # noqa: F811
    invoice = sale(platform_config, country="CH")
    outcome = run_post_invoice_hook(invoice.id, storage=storage, config=platform_config)
    assert Transmission.get_by_id(outcome.transmission_id).processing_rule == "B2BInt"  # e-reporting data
    assert queued_mails(invoice.id) == 1
    assert mailing.mail_document(invoice.id, storage=storage) is not None
    assert "copie" not in body_of(invoice.id)  # the PDF is the invoice itself
