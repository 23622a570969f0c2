"""Overdue bank transfers: listed after `BANK_TRANSFER_DUE_DAYS`, one reminder e-mail each, however
often the pass runs (a redelivered pass included)."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from backend import clock
from backend.billing.bank import overdue
from backend.billing.models import BankTransferReminder, Invoice, PaymentMethod
from backend.email.messages import EmailMessage
from backend.identity.models import BillingProfile
from tests.billing.bank.statements_data import collected, config, credit, statement


def test_an_overdue_transfer_is_listed_and_reminded_once():
    from backend.billing.bank import statements

    late, paid = collected(PaymentMethod.BANK_TRANSFER), collected(PaymentMethod.BANK_TRANSFER)
    statements.import_statement(statement(credit(paid, by_number=True)), config=config(), user_id=None)
    due_at = Invoice.get_by_id(late.invoice_id).due_at
    settings = config()
    # The billing contact of every billing e-mail (`contacts.billing_recipients`).
    BillingProfile.update(billing_email="compta@industriel.example").where(
        BillingProfile.organization == late.organization_id).execute()

    def listed() -> set[str]:
        return {item.payment_order_id for item in overdue.overdue(config=settings, page=1, page_size=100).items}

    with clock.frozen_at(due_at + timedelta(days=29)):
        assert late.id not in listed()
        overdue.remind_overdue(config=settings)
        assert not BankTransferReminder.select().where(BankTransferReminder.payment_order_id == late.id).exists()
    with clock.frozen_at(due_at + timedelta(days=31)):
        assert late.id in listed() and paid.id not in listed()
        overdue.remind_overdue(config=settings)
        overdue.remind_overdue(config=settings)  # the pass again, or its message redelivered
        item = next(i for i in overdue.overdue(config=settings, page=1, page_size=100).items
                    if i.payment_order_id == late.id)
    assert item.reminded_at is not None and item.days_overdue == 31
    number = Invoice.get_by_id(late.invoice_id).number
    [mail] = EmailMessage.select().where(EmailMessage.template == "bank_transfer_overdue",
                                         EmailMessage.subject.contains(number))
    assert number in mail.body_text and "FR76 3000 6000 0112 3456 7890 189" in mail.body_text
    assert "1\u202f440,00" in mail.body_text and mail.to_address == "compta@industriel.example"


def test_no_reminder_without_the_platforms_iban():
    settings = dataclasses.replace(config(), platform_legal_iban=None)
    late = collected(PaymentMethod.BANK_TRANSFER)
    with clock.frozen_at(Invoice.get_by_id(late.invoice_id).due_at + timedelta(days=31)):
        assert overdue.remind_overdue(config=settings) == 0
