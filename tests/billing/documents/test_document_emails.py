"""The billing e-mails: subjects on one trimmed line, and a `Reply-To` naming the platform's
billing contact on every message that invites a reply (the sender is a no-reply address)."""

from __future__ import annotations

import dataclasses
from email import message_from_bytes, policy
from pathlib import Path

import pytest

from backend.config import load_config
from backend.email.messages import deliver_email, queue_email
from backend.email.templates import TEMPLATES, render

CONTACT = "facturation@vitrine.example"


def _sent(config, message_id: str):
    (path,) = (Path(config.data_dir) / "mail").glob(f"*-{message_id}.eml")
    return message_from_bytes(path.read_bytes(), policy=policy.default)


def test_a_subject_is_one_trimmed_line_whatever_its_values():
    subject, _ = render("self_billing_contest_rejected", platform=" Vitrine ", number=" FAC-1 ", note="n",
                        contact="c", link="l")
    assert subject == "Votre contestation de la facture FAC-1 : Vitrine"
    for name, template in TEMPLATES.items():
        assert template.subject == template.subject.strip() and "  " not in template.subject, name


@pytest.mark.parametrize(("template", "context", "reply_to"), [
    ("self_billing_contest_rejected", {"number": "FAC-SUP-1", "note": "n", "contact": "c", "link": "l"}, CONTACT),
    ("bank_transfer_overdue", {"invoice_number": "FAC-RES-1", "amount": "1 €", "organization": "O",
                               "due_date": "01/12/2026", "iban": "FR76"}, CONTACT),
    ("billing_document", {"document": "Facture", "document_phrase": "la facture", "number": "FAC-RES-1",
                          "issued_on": "1er décembre 2026", "issuer": "Vitrine", "amount": "1 €", "payment": "p",
                          "copy": "", "link": "l"}, None),
])
def test_a_message_inviting_a_reply_is_answered_to_the_billing_contact(config, template, context, reply_to):
    contact = dataclasses.replace(config, platform_billing_contact_email=CONTACT)
    message = queue_email(template, to="client@example.com", **context)
    assert deliver_email(message.id, config=contact) is True
    sent = _sent(config, message.id)
    assert sent["Reply-To"] == reply_to
    assert sent["From"] == config.mail_from


def test_the_billing_contact_defaults_to_the_legal_email():
    assert load_config({"PLATFORM_LEGAL_EMAIL": "compta@vitrine.example"}).platform_billing_contact_email == \
        "compta@vitrine.example"
    assert load_config({"PLATFORM_LEGAL_EMAIL": "compta@vitrine.example",
                        "PLATFORM_BILLING_CONTACT_EMAIL": CONTACT}).platform_billing_contact_email == CONTACT
