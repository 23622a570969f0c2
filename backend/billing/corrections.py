"""Refunds and credit notes of an issued invoice (API.md, spec C "Collection and refunds").

Both issue a credit note of the credited kind (`platform_sale` -> `platform_credit_note`,
`supplier_self_billed` -> `supplier_credit_note`) naming the invoice, for at most what is left
of it (the invoice amount minus its earlier credit notes, all excluding tax), and record an audit
entry with the reason and the actor.

- A **refund** (`platform_sale` only) gives money back: a `refund` payment order of the credit
  note's amount including VAT, the credit note's entry in the books and the refund's
  (`accounting.ledger`), and the financial status `partially_refunded`, then `fully_refunded`
  when nothing is left.
- A **credit note** (`POST .../credit-note`) credits what is left in full and moves no money; the
  invoice becomes `credited`, and the credit note is booked (customer or supplier credit note).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from peewee import fn

from backend import clock
from backend.billing import idempotency, records, sepa_mandates
from backend.billing.accounting import ledger
from backend.billing.accounting.entries import paris_day
from backend.billing.invoices import InvoiceDraft, Line, issue_invoice
from backend.billing.models import (
    CREDIT_NOTE_KIND_OF,
    AuditEntry,
    FinancialStatus,
    Invoice,
    InvoiceKind,
    InvoiceStatus,
    PaymentKind,
    PaymentMethod,
    PaymentOrder,
    PaymentStatus,
)
from backend.billing.vat import amount_incl_tax_cents
from backend.config import Config
from backend.context import current_request_id
from backend.errors import Conflict, DomainError, NotFound, ValidationError
from backend.logs import log_event


def credited_cents(invoice_id: str) -> int:
    """What the invoice's credit notes already credit (excluding tax)."""
    return int(Invoice.select(fn.COALESCE(fn.SUM(Invoice.amount_excl_tax_cents), 0))
               .where(Invoice.credited_invoice == invoice_id).scalar())


def _locked_invoice(number: str) -> Invoice:
    invoice = Invoice.select().where(Invoice.number == number).for_update().first()
    if invoice is None:
        raise NotFound("invoice not found")
    return invoice


def _credit_note(invoice: Invoice, amount_cents: int, *, reason: str, user_id: str | None, label: str,
                 config: Config) -> Invoice:
    return issue_invoice(InvoiceDraft(
        kind=CREDIT_NOTE_KIND_OF[InvoiceKind(invoice.kind)],
        lines=(Line(f"{label} de la facture {invoice.number}", amount_cents),),
        issuer_organization_id=invoice.issuer_organization_id,
        customer_organization_id=invoice.customer_organization_id,
        reservation_id=invoice.reservation_id, service_starts_at=invoice.service_starts_at,
        service_ends_at=invoice.service_ends_at, credited_invoice_id=invoice.id, reason=reason,
        created_by_user_id=user_id,
    ), config=config)


def _book_sale_credit(credit_note: Invoice, *, refund: PaymentOrder | None = None) -> None:
    """The credit note's entry (VE), and the refund that pays it back (BQ) when there is one."""
    ledger.post_invoice(credit_note)
    if refund is not None:
        ledger.post_refund(credit_note, amount_cents=refund.amount_cents, payment_order_id=refund.id,
                           day=paris_day(refund.paid_at))


def _book_self_billing_credit(invoice: Invoice, *, amount_cents: int, credit_note: Invoice) -> None:
    """The supplier credit note's entry (AC): the payable on the self-billed invoice goes down."""
    ledger.post_invoice(credit_note)
    log_event("billing.supplier.self_billing.adjusted", "self-billed invoice credited", "info",
              reservationId=invoice.reservation_id, invoiceNumber=invoice.number,
              creditNoteNumber=credit_note.number, amountCents=amount_cents)


def _audit(action: str, *, reason: str, user_id: str | None, invoice: Invoice, payment_order_id: str | None = None,
           **details) -> None:
    AuditEntry.create(action=action, actor_user_id=user_id, reason=reason, reservation_id=invoice.reservation_id,
                      invoice_id=invoice.id, payment_order_id=payment_order_id, details=details,
                      request_id=current_request_id())


def _reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError("a reason is required", fields={"reason": ["required"]})
    return reason


@dataclass(frozen=True)
class Refunded:
    """A refund's answer; amounts exclude tax except the payment order's."""

    invoice_number: str
    credit_note_number: str
    payment_order_id: str
    refunded_cents: int
    amount_incl_tax_cents: int
    remaining_cents: int
    financial_status: str
    payment_status: str
    idempotent: bool = False


@dataclass(frozen=True)
class Credited:
    """A credit note in full's answer (no money moves)."""

    invoice_number: str
    credit_note_number: str
    credited_cents: int
    invoice_status: str


def refund(*, invoice_number: str, amount_cents: int, reason: str, method: PaymentMethod, user_id: str | None,
           config: Config) -> Refunded:
    """Refund part or all of a `platform_sale` (inside the caller's transaction)."""
    reason = _reason(reason)
    method = PaymentMethod(method)
    if amount_cents <= 0:
        raise ValidationError("the amount must be positive", fields={"amountCents": ["must be at least 1"]})
    fields = {"invoiceNumber": invoice_number, "amountCents": amount_cents, "paymentMethod": method.value}
    log_event("billing.refund.requested", "refund requested", "info", **fields)
    invoice = _locked_invoice(invoice_number)
    if invoice.kind != InvoiceKind.PLATFORM_SALE:
        raise Conflict("only platform_sale invoices are refundable", reason="not_refundable", kind=invoice.kind)
    before = credited_cents(invoice.id)
    left = invoice.amount_excl_tax_cents - before
    if amount_cents > left:
        raise Conflict(f"only {left} cents (excluding tax) are left to refund", reason="over_refund",
                       remainingCents=left)
    mandate_ref = None
    if method is PaymentMethod.SEPA_DD:
        mandate = sepa_mandates.active_mandate(invoice.customer_organization_id)
        if mandate is None:
            raise Conflict("the organization has no active SEPA mandate", reason="sepa_mandate_missing")
        mandate_ref = mandate.mandate_ref
    record = records.locked_record(invoice.reservation_id)
    credit_note = _credit_note(invoice, amount_cents, reason=reason, user_id=user_id, label="Remboursement",
                               config=config)
    now = clock.now()
    order = PaymentOrder.create(
        reservation_id=invoice.reservation_id, invoice=credit_note.id, organization_id=invoice.customer_organization_id,
        kind=PaymentKind.REFUND, method=method, status=PaymentStatus.PAID, paid_at=now, mandate_ref=mandate_ref,
        amount_cents=amount_incl_tax_cents(amount_cents, credit_note.vat_rate_bps), created_by_user_id=user_id,
    )
    _book_sale_credit(credit_note, refund=order)
    remaining = left - amount_cents
    status = FinancialStatus.FULLY_REFUNDED if remaining == 0 else FinancialStatus.PARTIALLY_REFUNDED
    records.move(record, status, refunded_excl_tax_cents=record.refunded_excl_tax_cents + amount_cents)
    if remaining == 0:
        _set_status(invoice, InvoiceStatus.CREDITED)
    _audit("billing.refund", reason=reason, user_id=user_id, invoice=invoice, payment_order_id=order.id,
           amountCents=amount_cents, creditNoteNumber=credit_note.number, paymentMethod=method.value)
    log_event("billing.refund.paid", "refund paid", "info", **fields, creditNoteNumber=credit_note.number,
              paymentOrderId=order.id, remainingCents=remaining)
    return Refunded(invoice.number, credit_note.number, order.id, amount_cents, order.amount_cents, remaining,
                    record.financial_status, order.status)


def credit_in_full(*, invoice_number: str, reason: str, user_id: str | None, config: Config) -> Credited:
    """Credit what is left of the invoice (inside the caller's transaction), moving no money."""
    reason = _reason(reason)
    invoice = _locked_invoice(invoice_number)
    if InvoiceKind(invoice.kind) not in CREDIT_NOTE_KIND_OF:
        raise Conflict(f"a {invoice.kind} invoice cannot be credited here", reason="not_creditable", kind=invoice.kind)
    before = credited_cents(invoice.id)
    left = invoice.amount_excl_tax_cents - before
    if left <= 0 or invoice.status == InvoiceStatus.CREDITED:
        raise Conflict("the invoice is already credited in full", reason="already_credited")
    credit_note = _credit_note(invoice, left, reason=reason, user_id=user_id, label="Avoir", config=config)
    if invoice.kind == InvoiceKind.PLATFORM_SALE:
        _book_sale_credit(credit_note)
    else:
        _book_self_billing_credit(invoice, amount_cents=left, credit_note=credit_note)
    _set_status(invoice, InvoiceStatus.CREDITED)
    _audit("billing.credit_note", reason=reason, user_id=user_id, invoice=invoice, amountCents=left,
           creditNoteNumber=credit_note.number)
    log_event("billing.credit_note.issued", "credit note issued", "info", invoiceNumber=invoice.number,
              creditNoteNumber=credit_note.number, amountCents=left)
    return Credited(invoice.number, credit_note.number, left, InvoiceStatus.CREDITED.value)


def _set_status(invoice: Invoice, status: InvoiceStatus) -> None:
    now = clock.now()
    Invoice.update(status=status, updated_at=now).where(Invoice.id == invoice.id).execute()
    invoice.status = status


REFUND_ROUTE = "billing.invoice.refund"


def refund_path(invoice_number: str) -> str:
    return f"/api/billing/invoices/{invoice_number}/refund"


def refund_once(*, scope: str, key: str, invoice_number: str, amount_cents: int, reason: str,
                method: PaymentMethod, user_id: str | None, config: Config) -> Refunded:
    """`refund` once per `Idempotency-Key` (scope: the caller's organization or user)."""
    body = {"amountCents": amount_cents, "reason": reason, "paymentMethod": PaymentMethod(method).value}
    try:
        held = idempotency.Key(scope, REFUND_ROUTE, key, idempotency.fingerprint("POST", refund_path(invoice_number),
                                                                                 body))
        with idempotency.claim(held) as claim:
            if claim.replay is not None:
                return replace(Refunded(**claim.replay), idempotent=True)
            answer = refund(invoice_number=invoice_number, amount_cents=amount_cents, reason=reason, method=method,
                            user_id=user_id, config=config)
            claim.store(asdict(answer))
    except DomainError as exc:
        log_event("billing.refund.failed", "refund refused", "warn", invoiceNumber=invoice_number,
                  amountCents=amount_cents, code=exc.code, errorMessage=exc.message, reason=exc.details.get("reason"))
        raise
    return answer
