"""Overdue bank transfers (docs/bank.md "Overdue transfers").

A `bank_transfer` collection that no statement has settled `BANK_TRANSFER_DUE_DAYS` (default 30)
after its invoice's due date is overdue: `overdue` lists them for the finance team, and
`remind_overdue` (a periodic pass) sends the industrial's billing contact one reminder e-mail per
payment order, naming the invoice, the amount and the platform's IBAN. "Once" is held by the
database: the reminder row (`billing_bank_transfer_reminder`, keyed by the payment order) and the
e-mail's outbox row commit together, and a pass run twice, or a redelivered one, finds the row.

The billing contact is the one of every billing e-mail (`contacts.billing_recipients`): the
billing profile's e-mail, else the organization's managers; the reminder row names the first.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from peewee import JOIN

from backend import clock
from backend.billing.bank import camt
from backend.billing.contacts import billing_recipients
from backend.billing.models import (
    BankTransferReminder,
    Invoice,
    PaymentKind,
    PaymentMethod,
    PaymentOrder,
    PaymentStatus,
    Settlement,
)
from backend.config import Config
from backend.db import transaction
from backend.documents.formatting import format_euros
from backend.email.messages import queue_email
from backend.identity.models import Organization
from backend.listing import Page
from backend.logs import log_event

BATCH = 200


@dataclass(frozen=True)
class Overdue:
    payment_order_id: str
    organization_id: str
    organization_name: str
    invoice_number: str
    amount_cents: int
    due_at: datetime
    days_overdue: int
    reminded_at: datetime | None


def _query(config: Config, now: datetime):
    limit = now - timedelta(days=config.bank_transfer_due_days)
    return (PaymentOrder.select(PaymentOrder, Invoice.number.alias("invoice_number"), Invoice.due_at.alias("due_at"),
                                Organization.legal_name.alias("organization_name"),
                                BankTransferReminder.created_at.alias("reminded_at"))
            .join(Invoice, on=PaymentOrder.invoice == Invoice.id)
            .join(Organization, on=Organization.id == PaymentOrder.organization_id)
            .join(BankTransferReminder, JOIN.LEFT_OUTER,
                  on=BankTransferReminder.payment_order_id == PaymentOrder.id)
            .where(PaymentOrder.method == PaymentMethod.BANK_TRANSFER,
                   PaymentOrder.kind == PaymentKind.RESERVATION_TOTAL, PaymentOrder.status == PaymentStatus.PAID,
                   PaymentOrder.settlement == Settlement.UNSENT, Invoice.due_at < limit)
            .order_by(Invoice.due_at, PaymentOrder.id))


def _item(row, now: datetime) -> Overdue:
    return Overdue(row.id, row.organization_id, row.organization_name, row.invoice_number, row.amount_cents,
                   row.due_at, (now - row.due_at).days, row.reminded_at)


def overdue(*, config: Config, page: int, page_size: int) -> Page:
    """One page of the overdue transfers, oldest due date first."""
    now = clock.now()
    query = _query(config, now)
    return Page(items=[_item(row, now) for row in query.paginate(page, page_size).objects()], total=query.count(),
                page=page, page_size=page_size)


def remind_overdue(*, config: Config) -> int:
    """Send the reminders not sent yet (at most `BATCH` a pass); how many were queued."""
    iban = camt.normalized_iban(config.platform_legal_iban or "")
    if not iban:
        log_event("billing.bank.overdue.no_iban", "overdue reminders wait for PLATFORM_LEGAL_IBAN", "warn")
        return 0
    now = clock.now()
    due = [_item(row, now) for row in _query(config, now).where(BankTransferReminder.payment_order_id.is_null())
           .limit(BATCH).objects()]
    sent = 0
    for item in due:
        recipients = billing_recipients(item.organization_id)
        if not recipients:
            continue
        with transaction():
            inserted = (BankTransferReminder.insert(payment_order_id=item.payment_order_id, email=recipients[0],
                                                    created_at=now)
                        .on_conflict_ignore().execute())
            if not inserted:
                continue  # another pass sent it
            for to in recipients:
                queue_email("bank_transfer_overdue", to=to, invoice_number=item.invoice_number,
                            amount=format_euros(item.amount_cents), organization=item.organization_name,
                            due_date=item.due_at.date().strftime("%d/%m/%Y"), iban=_grouped(iban))
        sent += 1
        log_event("billing.bank.overdue.reminded", "overdue bank transfer reminded", "info",
                  paymentOrderId=item.payment_order_id, invoiceNumber=item.invoice_number,
                  daysOverdue=item.days_overdue)
    return sent


def _grouped(iban: str) -> str:
    return " ".join(iban[i:i + 4] for i in range(0, len(iban), 4))
