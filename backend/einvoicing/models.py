"""E-invoicing tables (migrations `085`, `086`, `125`): one transmission per invoice document and
flow, the history of its statuses (written by a database trigger), its lifecycle statuses, the
platform's 212 payment reports, the directory cache and the polling passes."""

from __future__ import annotations

from peewee import (
    BigAutoField,
    BigIntegerField,
    BooleanField,
    CharField,
    DateField,
    ForeignKeyField,
    IntegerField,
    SmallIntegerField,
    TextField,
)
from playhouse.postgres_ext import BinaryJSONField, DateTimeTZField

from backend.einvoicing.status import DocumentKind, FlowType, ProviderStatus, TransmissionStatus
from backend.model import BaseModel, created_at_field, id_field, status_field


def idempotency_key(invoice_number: str, document_kind: str, flow_type: str) -> str:
    """`<invoiceNumber>:<documentKind>:<flowType>` (spec C; the database checks the shape)."""
    return f"{invoice_number}:{document_kind}:{flow_type}"


class Transmission(BaseModel):
    id = id_field()
    idempotency_key = CharField(max_length=200)
    invoice_number = CharField(max_length=80)  # the invoice's number (its id in routes)
    invoice_kind = CharField(max_length=40, null=True)  # platform_sale, ... (reconciliation scope)
    document_kind = status_field(DocumentKind)
    flow_type = status_field(FlowType)
    status = status_field(TransmissionStatus, default=TransmissionStatus.PENDING_DISPATCH)
    provider_status = status_field(ProviderStatus, null=True)
    provider_flow_id = CharField(max_length=120, null=True)
    operator_status = CharField(max_length=40, null=True)  # the operator's last word, as answered
    document_pdf_key = TextField(null=True)
    amount_incl_tax_cents = BigIntegerField()
    dispatch_attempts = IntegerField(default=0)
    dispatch_claimed_at = DateTimeTZField(null=True)
    last_error_code = CharField(max_length=60, null=True)
    last_error_message = TextField(null=True)
    last_synced_at = DateTimeTZField(null=True)
    buyer_siren = CharField(max_length=9, null=True)  # the frozen buyer's (BT-47), its electronic address
    buyer_country = CharField(max_length=2, null=True)
    processing_rule = CharField(max_length=10, default="B2B")  # B2B, or B2BInt (e-reporting)
    lifecycle_code = SmallIntegerField(null=True)  # the latest lifecycle status (a trigger keeps it)
    lifecycle_at = DateTimeTZField(null=True)
    next_dispatch_at = DateTimeTZField(null=True)  # a throttled dispatch, run again by polling
    created_at = created_at_field()
    updated_at = created_at_field()
    status_changed_at = created_at_field()

    class Meta:
        table_name = "einvoice_transmission"

    @property
    def terminal(self) -> bool:
        from backend.einvoicing.status import TERMINAL

        return self.status in TERMINAL


class TransmissionEvent(BaseModel):
    """One status change: from, to, when, why (`trigger`), by whom, and the operator's answer."""

    id = BigAutoField()
    transmission = ForeignKeyField(Transmission, backref="events", on_delete="CASCADE")
    from_status = CharField(max_length=20, null=True)
    to_status = CharField(max_length=20)
    provider_status = CharField(max_length=20, null=True)
    operator_status = CharField(max_length=40, null=True)
    operator_answer = BinaryJSONField(null=True)
    error_code = CharField(max_length=60, null=True)
    error_message = TextField(null=True)
    trigger = CharField(max_length=40)
    actor_user_id = CharField(max_length=36, null=True)
    occurred_at = DateTimeTZField()

    class Meta:
        table_name = "einvoice_transmission_event"


class LifecycleEvent(BaseModel):
    """A lifecycle status of the reform (200 Déposée ... 213 Rejetée), once per (code, date)."""

    id = BigAutoField()
    transmission = ForeignKeyField(Transmission, backref="lifecycle_events", on_delete="CASCADE")
    code = SmallIntegerField()
    at = DateTimeTZField()
    reason = TextField(null=True)
    received_at = created_at_field()

    class Meta:
        table_name = "einvoice_lifecycle_event"


class SentStatus(BaseModel):
    """What sending one of the platform's own status flows records (`status_flows`): the fields
    `PaymentReport` and `DecisionReport` share; no table of its own."""

    idempotency_key = CharField(max_length=200)
    invoice_number = CharField(max_length=80)
    status = CharField(max_length=10, default="pending")
    provider_flow_id = CharField(max_length=120, null=True)
    attempts = IntegerField(default=0)
    last_error_message = TextField(null=True)
    created_at = created_at_field()
    sent_at = DateTimeTZField(null=True)


class PaymentReport(SentStatus):
    """The platform's own 212 "Encaissée" for one payment order (negative for a refund); its key
    `<invoiceNumber>:212:<paymentOrderId>`."""

    id = id_field()
    payment_order_id = CharField(max_length=36)
    amount_cents = BigIntegerField()
    amounts = BinaryJSONField()  # [{vatRateBps, amountCents}] including VAT, per rate
    paid_on = DateField()

    class Meta:
        table_name = "einvoice_payment_report"


class DirectoryEntry(BaseModel):
    """The operator directory's answer for a SIREN, and when it was asked."""

    siren = CharField(max_length=9, primary_key=True)
    registered = BooleanField()
    checked_at = DateTimeTZField()

    class Meta:
        table_name = "einvoice_directory_entry"


class TransmissionSkip(BaseModel):
    """An invoice given no transmission before e-reporting was sent (migration 086): old rows only."""

    invoice_number = CharField(max_length=80, primary_key=True)
    flow_type = status_field(FlowType)
    reason = CharField(max_length=40)
    created_at = created_at_field()

    class Meta:
        table_name = "einvoice_transmission_skip"


class PollingPass(BaseModel):
    """One polling pass and its counters (migration 086); at most one is `running`."""

    id = BigAutoField()
    started_at = DateTimeTZField()
    finished_at = DateTimeTZField(null=True)
    outcome = CharField(max_length=20, default="running")
    loaded = IntegerField(default=0)
    acknowledged = IntegerField(default=0)
    rejected = IntegerField(default=0)
    sent = IntegerField(default=0)
    unchanged = IntegerField(default=0)
    failed = IntegerField(default=0)
    errors = IntegerField(default=0)
    # The latest `updatedAt` its search saw (the operator's clock; the next search starts there),
    # None when its search did not complete.
    updated_after = DateTimeTZField(null=True)
    searches = IntegerField(default=0)  # operator searches the pass made
    lifecycle = IntegerField(default=0)  # lifecycle statuses it stored

    class Meta:
        table_name = "einvoicing_polling_pass"


class DecisionReport(SentStatus):
    """A 205 Approuvée, 207 En litige or 210 Refusée the platform sends for a self-billed invoice,
    in the name of the distributor who decided (migrations 153, 195); its key `<invoiceNumber>:<code>`."""

    id = id_field()
    code = SmallIntegerField()
    reason_code = CharField(max_length=40, null=True)  # the reform's closed list (BR-FR-CDV-CL-09)
    reason = TextField(null=True)
    decided_at = DateTimeTZField()

    class Meta:
        table_name = "einvoice_decision_report"
