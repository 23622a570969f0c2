"""Billing tables (migration `070_billing_core` holds the constraints and triggers these models
mirror: invoice immutability, append-only ledger and audit, balanced journals).

Organization, user and reservation references are plain text columns, so this module imports
neither the identity nor the marketplace area; queries scope on them explicitly.
"""

from __future__ import annotations

from enum import StrEnum

from peewee import (
    BigAutoField,
    BigIntegerField,
    CharField,
    CompositeKey,
    DateField,
    ForeignKeyField,
    IntegerField,
    TextField,
)
from playhouse.postgres_ext import ArrayField, BinaryJSONField, DateTimeTZField

from backend.model import BaseModel, created_at_field, id_field, status_field


class FinancialStatus(StrEnum):
    """BillingFinancialStatus of Specification C."""

    DRAFT = "draft"
    DEPOSIT_DUE = "deposit_due"
    DEPOSIT_PAID = "deposit_paid"
    BALANCE_DUE = "balance_due"
    BALANCE_PAID = "balance_paid"
    RESERVATION_TOTAL_DUE = "reservation_total_due"
    RESERVATION_TOTAL_PAID = "reservation_total_paid"
    PARTIALLY_REFUNDED = "partially_refunded"
    FULLY_REFUNDED = "fully_refunded"
    SUPPLIER_SETTLEMENT_PENDING = "supplier_settlement_pending"
    SUPPLIER_SETTLEMENT_PAID = "supplier_settlement_paid"
    CANCELLED = "cancelled"
    WRITTEN_OFF = "written_off"


class InvoiceKind(StrEnum):
    """BillingInvoiceKind of Specification C."""

    STORE_DEPOSIT = "store_deposit"
    STORE_BALANCE = "store_balance"
    PLATFORM_COMMISSION = "platform_commission"
    PLATFORM_SALE = "platform_sale"
    PLATFORM_CREDIT_NOTE = "platform_credit_note"
    SUPPLIER_SELF_BILLED = "supplier_self_billed"
    SUPPLIER_CREDIT_NOTE = "supplier_credit_note"


CREDIT_NOTE_KINDS = frozenset({InvoiceKind.PLATFORM_CREDIT_NOTE, InvoiceKind.SUPPLIER_CREDIT_NOTE})
LEGACY_KINDS = frozenset({InvoiceKind.STORE_DEPOSIT, InvoiceKind.STORE_BALANCE, InvoiceKind.PLATFORM_COMMISSION})
# Spec C: the credit-note kind follows the credited kind.
CREDIT_NOTE_KIND_OF = {
    InvoiceKind.PLATFORM_SALE: InvoiceKind.PLATFORM_CREDIT_NOTE,
    InvoiceKind.SUPPLIER_SELF_BILLED: InvoiceKind.SUPPLIER_CREDIT_NOTE,
}


class InvoiceStatus(StrEnum):
    ISSUED = "issued"
    PARTIALLY_PAID = "partially_paid"
    PAID = "paid"
    CANCELLED = "cancelled"
    CREDITED = "credited"


class PaymentKind(StrEnum):
    DEPOSIT = "deposit"
    BALANCE = "balance"
    RESERVATION_TOTAL = "reservation_total"
    REFUND = "refund"
    SUPPLIER_PAYOUT = "supplier_payout"


class PaymentMethod(StrEnum):
    SEPA_DD = "sepa_dd"
    BANK_TRANSFER = "bank_transfer"


class PaymentStatus(StrEnum):
    PENDING = "pending"
    SUBMITTED = "submitted"
    PROCESSING = "processing"
    PAID = "paid"
    FAILED = "failed"
    CANCELLED = "cancelled"


class Settlement(StrEnum):
    """The bank's view of a payment order (API.md "The bank"), beside spec C's status; the moves
    allowed are migration 144's (`backend/billing/bank/settlement.py` makes them)."""

    UNSENT = "unsent"
    IN_FILE = "in_file"
    SETTLED = "settled"
    RETURNED = "returned"


class BankFileKind(StrEnum):
    DIRECT_DEBIT = "direct_debit"  # pain.008.001.08
    CREDIT_TRANSFER = "credit_transfer"  # pain.001.001.09


class BankFileStatus(StrEnum):
    LIVE = "live"
    VOID = "void"


class MandateStatus(StrEnum):
    ACTIVE = "active"
    ENDED = "ended"


class SelfBillingMandateStatus(StrEnum):
    """Self-billing mandate states of Specification C (`pending_signature` and `signed` are active)."""

    DRAFT = "draft"
    PENDING_SIGNATURE = "pending_signature"
    SIGNED = "signed"
    DECLINED = "declined"
    REVOKED = "revoked"
    ABANDONED = "abandoned"  # a draft whose request failed: kept, never deleted


ACTIVE_SELF_BILLING_MANDATE = frozenset({SelfBillingMandateStatus.PENDING_SIGNATURE, SelfBillingMandateStatus.SIGNED})


class IncidentStatus(StrEnum):
    OPEN = "open"
    RELEASED = "released"


class FinancialRecord(BaseModel):
    """A reservation's financial state, with the amounts frozen when it was first billed."""

    reservation_id = CharField(primary_key=True, max_length=36)
    billing_model = CharField(max_length=40)
    financial_status = status_field(FinancialStatus, default=FinancialStatus.DRAFT)
    store_base_cents = BigIntegerField()
    commission_cents = BigIntegerField()
    total_cents = BigIntegerField()
    commission_rate_bps = IntegerField()
    refunded_excl_tax_cents = BigIntegerField(default=0)  # money given back (refunds, credit repaid)
    created_at = created_at_field()
    updated_at = created_at_field()

    class Meta:
        table_name = "billing_financial_record"


class NumberCounter(BaseModel):
    """The last number allocated in a series (`FAC-RES-2026`); locked FOR UPDATE to allocate."""

    series = CharField(primary_key=True, max_length=80)
    last_value = IntegerField(default=0)
    updated_at = created_at_field()

    class Meta:
        table_name = "billing_number_counter"


class Invoice(BaseModel):
    """An issued invoice or credit note. `issuer`/`customer` are snapshots of the parties at issue
    (an organization id of None is the platform); amounts exclude tax, the VAT rate is frozen."""

    id = id_field()
    number = CharField(max_length=80)
    series = CharField(max_length=80)
    sequence = IntegerField()
    kind = status_field(InvoiceKind)
    status = status_field(InvoiceStatus, default=InvoiceStatus.ISSUED)
    reservation_id = CharField(max_length=36, null=True)
    issuer_organization_id = CharField(max_length=64, null=True)
    customer_organization_id = CharField(max_length=64, null=True)
    issuer = BinaryJSONField()
    customer = BinaryJSONField()
    lines = BinaryJSONField(default=list)
    amount_excl_tax_cents = BigIntegerField()
    tax_amount_cents = BigIntegerField(default=0)  # spec C: stays 0, VAT computed at read time
    vat_rate_bps = IntegerField()
    currency = CharField(max_length=3, default="EUR")
    issued_at = DateTimeTZField()
    due_at = DateTimeTZField()
    service_starts_at = DateTimeTZField(null=True)
    service_ends_at = DateTimeTZField(null=True)
    credited_invoice = ForeignKeyField("self", null=True, backref="credit_notes", on_delete="RESTRICT")
    # Credit notes only: what the credited invoice's earlier credit notes credit (frozen at issue;
    # the credit note's VAT is the cumulative difference, backend/billing/vat.py).
    credited_before_cents = BigIntegerField(null=True)
    reason = TextField(null=True)
    created_by_user_id = CharField(max_length=36, null=True)
    pdf_storage_key = TextField(null=True)
    pdf_sha256 = CharField(max_length=64, null=True)  # recorded when the PDF is first stored, never changed
    # the `invoice` template and PDF style versions (0: the built-in style) frozen at issue by the
    # database (migration 150): its PDF is rendered with them, always
    pdf_template_version = IntegerField(null=True)
    pdf_style_version = IntegerField(null=True)
    paid_at = DateTimeTZField(null=True)
    created_at = created_at_field()
    updated_at = created_at_field()

    class Meta:
        table_name = "billing_invoice"

    @property
    def has_pdf(self) -> bool:
        return bool(self.pdf_storage_key)


class SepaMandate(BaseModel):
    """An organization's SEPA direct-debit mandate: the signed onboarding `sepa_mandate` document
    plus the billing profile IBAN at signature; at most one `active` per organization."""

    id = id_field()
    organization_id = CharField(max_length=64)
    mandate_ref = CharField(max_length=35)
    iban = CharField(max_length=34)
    status = status_field(MandateStatus, default=MandateStatus.ACTIVE)
    signature_request_id = CharField(max_length=36, null=True)
    document_storage_key = TextField(null=True)
    signed_at = DateTimeTZField()
    ended_at = DateTimeTZField(null=True)
    end_reason = TextField(null=True)
    created_at = created_at_field()
    retries_stopped_at = DateTimeTZField(null=True)  # its second returned debit in 90 days (docs/bank.md)

    class Meta:
        table_name = "billing_sepa_mandate"


class PaymentOrder(BaseModel):
    """Money asked of (collection) or given back to (refund) the organization, or paid out to a
    distributor (`supplier_payout`). `amount_cents` includes VAT."""

    id = id_field()
    reservation_id = CharField(max_length=36, null=True)
    invoice = ForeignKeyField(Invoice, null=True, backref="payment_orders", on_delete="RESTRICT")
    organization_id = CharField(max_length=64)
    kind = status_field(PaymentKind)
    method = status_field(PaymentMethod)
    status = status_field(PaymentStatus, default=PaymentStatus.PENDING)
    amount_cents = BigIntegerField()
    currency = CharField(max_length=3, default="EUR")
    mandate_ref = CharField(max_length=35, null=True)
    failure_code = CharField(max_length=80, null=True)
    failure_message = TextField(null=True)
    created_by_user_id = CharField(max_length=36, null=True)
    created_at = created_at_field()
    updated_at = created_at_field()
    paid_at = DateTimeTZField(null=True)
    settlement = status_field(Settlement, default=Settlement.UNSENT)
    settled_on = DateField(null=True)  # the statement's booking date
    returned_on = DateField(null=True)  # the booking date of the return
    return_code = CharField(max_length=4, null=True)  # ISO 20022 reason of the return (AM04, MD06...)
    # A payout's or refund's creditor account, as approved at KYB when the order was made (the
    # credit transfer file pays it, never the live billing profile), and when it was approved.
    creditor_iban = CharField(max_length=34, null=True)
    creditor_name = CharField(max_length=200, null=True)
    creditor_bic = CharField(max_length=11, null=True)
    creditor_approved_at = DateTimeTZField(null=True)

    class Meta:
        table_name = "billing_payment_order"


class BankFile(BaseModel):
    """A message for the bank (migration `144_bank_files`): its XML is stored privately
    (`storage_key`, `sha256`) and never changes; a `live` file may only be voided."""

    id = id_field()
    kind = status_field(BankFileKind)
    message_id = CharField(max_length=35)
    count = IntegerField()
    control_sum_cents = BigIntegerField()
    requested_on = DateField()  # requested collection date (debits) or execution date (transfers)
    storage_key = TextField()
    sha256 = CharField(max_length=64)
    status = status_field(BankFileStatus, default=BankFileStatus.LIVE)
    voided_at = DateTimeTZField(null=True)
    void_reason = TextField(null=True)
    created_by_user_id = CharField(max_length=36, null=True)
    created_at = created_at_field()

    class Meta:
        table_name = "billing_bank_file"


class BankFileOrder(BaseModel):
    """A payment order in a bank file; `file_kind`/`file_status` follow the file (composite foreign
    key, `ON UPDATE CASCADE`) so the database keeps each order in at most one live file."""

    file_id = CharField(max_length=36)
    file_kind = status_field(BankFileKind)
    file_status = status_field(BankFileStatus, default=BankFileStatus.LIVE)
    payment_order = ForeignKeyField(PaymentOrder, backref="bank_file_links", on_delete="RESTRICT")
    amount_cents = BigIntegerField()
    sequence_type = CharField(max_length=4, null=True)  # FRST | RCUR, direct debits only

    class Meta:
        table_name = "billing_bank_file_order"
        primary_key = CompositeKey("file_id", "payment_order")


class LedgerEntry(BaseModel):
    """One line of a journal transaction of the first ledger (`journal_id`): read-only history,
    replaced by the books (`AccountingEntry`, `AccountingLine`; migration 140 says why)."""

    id = BigAutoField()
    journal_id = CharField(max_length=36)
    account = CharField(max_length=120)
    direction = CharField(max_length=6)  # debit | credit
    amount_cents = BigIntegerField()
    currency = CharField(max_length=3, default="EUR")
    reservation_id = CharField(max_length=36, null=True)
    invoice_id = CharField(max_length=36, null=True)
    payment_order_id = CharField(max_length=36, null=True)
    description = TextField()
    created_at = created_at_field()

    class Meta:
        table_name = "billing_ledger_entry"


class BankStatement(BaseModel):
    """An imported camt.053 or camt.054 document (migration 146), unique per account, kind and
    statement id; its counts as answered."""

    id = id_field()
    kind = CharField(max_length=8)
    message_id = CharField(max_length=35)
    statement_id = CharField(max_length=35)
    account_iban = CharField(max_length=34)
    document_sha256 = CharField(max_length=64)
    line_count = IntegerField()
    matched = IntegerField()
    returned = IntegerField()
    unmatched = IntegerField()
    imported_by_user_id = CharField(max_length=36, null=True)
    created_at = created_at_field()
    opening_balance_cents = BigIntegerField(null=True)  # a camt.053's booked balances (migration 200)
    closing_balance_cents = BigIntegerField(null=True)
    closing_date = DateField(null=True)

    class Meta:
        table_name = "billing_bank_statement"


class BankLine(BaseModel):
    """One booked line of a statement, unique per account and the bank's entry reference: `matched`
    (it settled `payment_order_id`), `returned` (it returned that direct debit) or `unmatched`."""

    id = id_field()
    statement_id = CharField(max_length=36)
    account_iban = CharField(max_length=34)
    entry_key = CharField(max_length=140)
    direction = CharField(max_length=6)  # credit | debit
    amount_cents = BigIntegerField()
    booking_date = DateField()
    end_to_end_id = CharField(max_length=35, null=True)
    remittance = TextField(null=True)
    counterparty_name = CharField(max_length=140, null=True)
    counterparty_iban = CharField(max_length=34, null=True)
    return_code = CharField(max_length=4, null=True)
    state = CharField(max_length=9)
    payment_order_id = CharField(max_length=36, null=True)
    matched_by_user_id = CharField(max_length=36, null=True)
    matched_at = DateTimeTZField(null=True)
    created_at = created_at_field()

    class Meta:
        table_name = "billing_bank_line"


class BankTransferReminder(BaseModel):
    """The one reminder e-mail of an overdue bank transfer collection."""

    payment_order_id = CharField(max_length=36, primary_key=True)
    email = CharField(max_length=320)
    created_at = created_at_field()

    class Meta:
        table_name = "billing_bank_transfer_reminder"


class AccountingEntry(BaseModel):
    """An entry of the books (migration `140_accounting_books`): append-only; numbered in its
    journal and fiscal year when its transaction commits (`number`, `validated_at`)."""

    id = id_field()
    journal_code = CharField(max_length=2)
    fiscal_year = IntegerField()
    number = IntegerField(null=True)
    entry_date = DateField()
    piece_ref = CharField(max_length=80, null=True)
    piece_date = DateField(null=True)
    label = TextField()
    event = CharField(max_length=40)
    reservation_id = CharField(max_length=36, null=True)
    invoice_id = CharField(max_length=36, null=True)
    payment_order_id = CharField(max_length=36, null=True)
    created_at = created_at_field()
    validated_at = DateTimeTZField(null=True)
    validation_seq = BigIntegerField(null=True)

    class Meta:
        table_name = "accounting_entry"


class AccountingLine(BaseModel):
    """A line of an entry: one account (PCG number, with the party's SIREN as auxiliary account on
    third-party accounts), a debit or a credit."""

    id = BigAutoField()
    entry = ForeignKeyField(AccountingEntry, backref="lines", on_delete="RESTRICT")
    line_no = IntegerField()
    account = CharField(max_length=20)
    aux_account = CharField(max_length=20, null=True)
    aux_label = TextField(null=True)
    label = TextField()
    debit_cents = BigIntegerField()
    credit_cents = BigIntegerField()
    letter_group = CharField(max_length=36, null=True)

    class Meta:
        table_name = "accounting_line"


class IdempotencyRecord(BaseModel):
    id = BigAutoField()
    scope = CharField(max_length=80)
    route = CharField(max_length=120)
    key = CharField(max_length=255)
    request_hash = CharField(max_length=64)
    state = CharField(max_length=20, default="in_flight")
    response_status = IntegerField(null=True)
    response_body = BinaryJSONField(null=True)
    created_at = created_at_field()
    expires_at = DateTimeTZField()

    class Meta:
        table_name = "billing_idempotency_record"


class AuditEntry(BaseModel):
    """The billing audit trail (refunds, credit notes, manual corrections): append-only."""

    id = BigAutoField()
    action = CharField(max_length=80)
    actor_user_id = CharField(max_length=36, null=True)
    reason = TextField()
    reservation_id = CharField(max_length=36, null=True)
    invoice_id = CharField(max_length=36, null=True)
    payment_order_id = CharField(max_length=36, null=True)
    details = BinaryJSONField(default=dict)
    request_id = CharField(max_length=128, null=True)
    created_at = created_at_field()

    class Meta:
        table_name = "billing_audit_entry"


class SelfBillingMandate(BaseModel):
    """A distributor's self-billing mandate (article 289 of the French tax code), signed through
    the e-signature provider; at most one active (`pending_signature` or `signed`) per
    organization (migration `072_self_billing`)."""

    id = id_field()
    organization_id = CharField(max_length=64)
    status = status_field(SelfBillingMandateStatus, default=SelfBillingMandateStatus.DRAFT)
    signature_level = CharField(max_length=40, default="electronic_signature")
    esign_request_ref = CharField(max_length=255, null=True)
    signer = BinaryJSONField(default=dict)
    document_storage_key = TextField(null=True)
    requested_by_user_id = CharField(max_length=36, null=True)
    requested_at = DateTimeTZField(null=True)
    signed_at = DateTimeTZField(null=True)
    declined_at = DateTimeTZField(null=True)
    decline_reason = TextField(null=True)
    revoked_at = DateTimeTZField(null=True)
    revoked_by_user_id = CharField(max_length=36, null=True)
    revoke_reason = TextField(null=True)
    abandoned_at = DateTimeTZField(null=True)  # a draft whose request failed (migration 186)
    document_sha256 = CharField(max_length=64, null=True)  # of the signed file, checked on download
    created_at = created_at_field()
    updated_at = created_at_field()

    class Meta:
        table_name = "billing_self_billing_mandate"

    @property
    def document_available(self) -> bool:
        return self.document_storage_key is not None


class ReservationIncident(BaseModel):
    """An incident an industrial declares on a reservation; while `open` it blocks self-billing.
    At most one `open` per reservation (migration `072_self_billing`)."""

    id = id_field()
    reservation_id = CharField(max_length=36)
    organization_id = CharField(max_length=64)  # the reservation's industrial organization
    status = status_field(IncidentStatus, default=IncidentStatus.OPEN)
    reason = TextField()
    declared_by_user_id = CharField(max_length=36)
    declared_at = DateTimeTZField()
    resolution_note = TextField(null=True)
    released_by_user_id = CharField(max_length=36, null=True)
    released_at = DateTimeTZField(null=True)
    created_at = created_at_field()
    updated_at = created_at_field()

    class Meta:
        table_name = "billing_reservation_incident"


class SupplierDebt(BaseModel):
    """What a distributor owes back (`debt`: a supplier credit note issued after its self-billed
    invoice was paid out) and what a later payout deducted (`deduction`); append-only, the
    outstanding amount per distributor never below zero (migration 130)."""

    id = BigAutoField()
    organization_id = CharField(max_length=64)
    kind = CharField(max_length=20)  # debt | deduction
    amount_excl_tax_cents = BigIntegerField()
    amount_cents = BigIntegerField()  # including VAT
    reservation_id = CharField(max_length=36, null=True)
    invoice_id = CharField(max_length=36)
    payment_order_id = CharField(max_length=36, null=True)
    created_at = created_at_field()

    class Meta:
        table_name = "billing_supplier_debt"


class DocumentMailing(BaseModel):
    """An invoice or credit note e-mailed to its recipient (once: the document is the key) and the
    e-mails it made (migration 152)."""

    invoice_id = CharField(max_length=36, primary_key=True)
    email_message_ids = ArrayField(CharField)
    recipients = ArrayField(CharField)
    created_at = created_at_field()

    class Meta:
        table_name = "billing_document_mailing"


class AcceptanceStatus(StrEnum):
    """What the distributor made of a self-billed invoice."""

    PENDING = "pending"
    ACCEPTED = "accepted"
    CONTESTED = "contested"
    TACITLY_ACCEPTED = "tacitly_accepted"


class ContestResolution(StrEnum):
    REJECTED = "rejected"
    ADJUSTED = "adjusted"


class SelfBilledAcceptance(BaseModel):
    """The distributor's acceptance or contest of one self-billed invoice, and the admin's
    resolution of a contest (migration 152)."""

    invoice_id = CharField(max_length=36, primary_key=True)
    organization_id = CharField(max_length=64)
    status = status_field(AcceptanceStatus, default=AcceptanceStatus.PENDING)
    decided_at = DateTimeTZField(null=True)
    decided_by_user_id = CharField(max_length=36, null=True)
    contest_reason = TextField(null=True)
    contested_at = DateTimeTZField(null=True)
    contested_by_user_id = CharField(max_length=36, null=True)
    resolution = CharField(max_length=10, null=True)
    resolution_note = TextField(null=True)
    resolved_at = DateTimeTZField(null=True)
    resolved_by_user_id = CharField(max_length=36, null=True)
    corrected_invoice_id = CharField(max_length=36, null=True)
    created_at = created_at_field()

    class Meta:
        table_name = "billing_self_billed_acceptance"
