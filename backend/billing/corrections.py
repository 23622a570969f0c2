"""Refunds and credit notes of an issued invoice (API.md, spec C "Collection and refunds", and
"Money that always balances").

Both issue a credit note of the credited kind (`platform_sale` -> `platform_credit_note`,
`supplier_self_billed` -> `supplier_credit_note`) naming the invoice, for at most what is left
of it (the invoice amount minus its earlier credit notes, all excluding tax), at the invoice's
frozen VAT rate with the cumulative-difference VAT (`backend/billing/vat.py`), and record an
audit entry with the reason and the actor.

- A **refund** (`platform_sale` only) gives money back: a `refund` payment order of the credit
  note's amount including VAT, the credit note's entry in the books and the refund's, in transit
  until the bank books it (`accounting.ledger`: VE, then `accounting.cash`: BQ), and the financial
  status `partially_refunded`, then `fully_refunded` when nothing is left.
- On a sale credited in full by the credit-note route (nothing left to credit), a refund repays
  the customer's credit (up to what is not repaid yet) with a `refund` payment order naming that
  credit note, and no new credit note (booked as the repayment of the credit, BQ).
- A **credit note** (`POST .../credit-note`) credits what is left in full and moves no money; the
  invoice becomes `credited`, and the credit note is booked (customer or supplier credit note).
  For a sale the customer is in credit (financial status `cancelled` when the whole sale is
  credited); for a self-billed invoice the reservation is self-billed again (`store_share`).
- Settlement follows the sale: after self-billing, what a refund or a credit note of the sale
  credits is credited on the self-billed invoice for its store share (`store_share.follow_sale`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from backend import clock
from backend.billing import creditor_accounts, idempotency, records, sepa_mandates, store_share
from backend.billing.accounting import cash, ledger
from backend.billing.accounting.entries import paris_day
from backend.billing.invoicing.invoices import credited_cents, incl_tax_cents, issue_credit_note
from backend.billing.models import (
    CREDIT_NOTE_KIND_OF,
    AuditEntry,
    FinancialRecord,
    FinancialStatus,
    Invoice,
    InvoiceKind,
    InvoiceStatus,
    PaymentKind,
    PaymentMethod,
    PaymentOrder,
    PaymentStatus,
)
from backend.billing.vat import vat_amount_cents
from backend.config import Config
from backend.context import current_request_id
from backend.db import transaction
from backend.errors import Conflict, DomainError, NotFound, ValidationError
from backend.logs import log_event


def _locked_invoice(number: str) -> Invoice:
    invoice = Invoice.select().where(Invoice.number == number).for_update().first()
    if invoice is None:
        raise NotFound("invoice not found")
    return invoice


def _book_sale_credit(credit_note: Invoice, *, refund: PaymentOrder | None = None) -> None:
    """The credit note's entry (VE), and the refund that pays it back, in transit (BQ) when there is one."""
    ledger.post_invoice(credit_note)
    if refund is not None:
        cash.post_in_transit([refund.id], day=paris_day(refund.paid_at))


@dataclass(frozen=True)
class CustomerCredit:
    """A sale's credit note that moved no money (the credit-note route), and what of it is repaid."""

    note: Invoice
    repaid_excl_tax_cents: int

    @property
    def left_excl_tax_cents(self) -> int:
        return self.note.amount_excl_tax_cents - self.repaid_excl_tax_cents

    def repayment_cents(self, amount: int) -> int:
        """What repaying `amount` more cents (excluding tax) returns including VAT: the note's VAT
        shared by the same cumulative difference, so repaying all of it returns the note's total."""
        note, repaid = self.note, self.repaid_excl_tax_cents
        vat = vat_amount_cents(note.amount_excl_tax_cents, note.vat_rate_bps,
                               credited_before_cents=note.credited_before_cents)
        total = note.amount_excl_tax_cents

        def share(x: int) -> int:
            return x + (vat * x * 2 + total) // (2 * total)  # the note's VAT pro rata, rounded half up

        return share(repaid + amount) - share(repaid)


def customer_credit(sale: Invoice, record: FinancialRecord) -> CustomerCredit | None:
    """The customer credit of a sale credited in full: its last credit note (the only one that can
    have moved no money: nothing is left to credit after it), of which the record's refunded total
    beyond the earlier notes (all refunds) is repaid. A note that was a refund is repaid in full."""
    if sale.status != InvoiceStatus.CREDITED:
        return None
    note = (Invoice.select().where(Invoice.credited_invoice == sale.id)
            .order_by(Invoice.credited_before_cents.desc()).get())
    return CustomerCredit(note, record.refunded_excl_tax_cents - note.credited_before_cents)


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
    """Refund part or all of a `platform_sale`, or repay its customer credit once it is credited in
    full (inside the caller's transaction)."""
    reason = _reason(reason)
    method = PaymentMethod(method)
    if amount_cents <= 0:
        raise ValidationError("the amount must be positive", fields={"amountCents": ["must be at least 1"]})
    fields = {"invoiceNumber": invoice_number, "amountCents": amount_cents, "paymentMethod": method.value}
    log_event("billing.refund.requested", "refund requested", "info", **fields)
    invoice = _locked_invoice(invoice_number)
    if invoice.kind != InvoiceKind.PLATFORM_SALE:
        raise Conflict("only platform_sale invoices are refundable", reason="not_refundable", kind=invoice.kind)
    record = records.locked_record(invoice.reservation_id)
    credit = customer_credit(invoice, record)
    before = credited_cents(invoice.id)
    left = credit.left_excl_tax_cents if credit is not None else invoice.amount_excl_tax_cents - before
    if amount_cents > left:
        raise Conflict(f"only {left} cents (excluding tax) are left to refund", reason="over_refund",
                       remainingCents=left)
    mandate_ref = None
    if method is PaymentMethod.SEPA_DD:
        mandate = sepa_mandates.active_mandate(invoice.customer_organization_id)
        if mandate is None:
            raise Conflict("the organization has no active SEPA mandate", reason="sepa_mandate_missing")
        mandate_ref = mandate.mandate_ref
    record.refunded_excl_tax_cents += amount_cents
    if credit is not None:  # the customer's credit repaid: no new credit note
        note = credit.note
        order = _refund_order(invoice, note, credit.repayment_cents(amount_cents), method=method,
                              mandate_ref=mandate_ref, user_id=user_id)
        cash.post_in_transit([order.id], day=paris_day(order.paid_at))
        records.move(record, FinancialStatus(record.financial_status))
    else:
        note = issue_credit_note(invoice, amount_cents, label="Remboursement", reason=reason, user_id=user_id,
                                 config=config)
        order = _refund_order(invoice, note, incl_tax_cents(note), method=method, mandate_ref=mandate_ref,
                              user_id=user_id)
        _book_sale_credit(note, refund=order)
        if amount_cents == left:
            _set_status(invoice, InvoiceStatus.CREDITED)
        store_share.follow_sale(record, invoice, before=before, amount=amount_cents,
                               whole=FinancialStatus.FULLY_REFUNDED, reason=reason, user_id=user_id, config=config)
    remaining = left - amount_cents
    _audit("billing.refund", reason=reason, user_id=user_id, invoice=invoice, payment_order_id=order.id,
           amountCents=amount_cents, creditNoteNumber=note.number, paymentMethod=method.value,
           repayment=credit is not None)
    log_event("billing.refund.paid", "refund paid", "info", **fields, creditNoteNumber=note.number,
              paymentOrderId=order.id, remainingCents=remaining)
    return Refunded(invoice.number, note.number, order.id, amount_cents, order.amount_cents, remaining,
                    record.financial_status, order.status)


def _refund_order(sale: Invoice, note: Invoice, amount_cents: int, *, method: PaymentMethod, mandate_ref: str | None,
                  user_id: str | None) -> PaymentOrder:
    """The `refund` payment order, paid at once (no payment service provider), naming its credit note."""
    return PaymentOrder.create(
        reservation_id=sale.reservation_id, invoice=note.id, organization_id=sale.customer_organization_id,
        kind=PaymentKind.REFUND, method=method, status=PaymentStatus.PAID, paid_at=clock.now(),
        mandate_ref=mandate_ref, amount_cents=amount_cents, created_by_user_id=user_id,
        **creditor_accounts.creditor_account(sale.customer_organization_id, paid_invoice_id=sale.id),
    )


def credit_in_full(*, invoice_number: str, reason: str, user_id: str | None, config: Config) -> Credited:
    """Credit what is left of the invoice, moving no money, in one transaction."""
    with transaction():
        reason = _reason(reason)
        invoice = _locked_invoice(invoice_number)
        if InvoiceKind(invoice.kind) not in CREDIT_NOTE_KIND_OF:
            raise Conflict(f"a {invoice.kind} invoice cannot be credited here", reason="not_creditable",
                           kind=invoice.kind)
        record = records.locked_record(invoice.reservation_id)
        before = credited_cents(invoice.id)
        left = invoice.amount_excl_tax_cents - before
        if left <= 0 or invoice.status == InvoiceStatus.CREDITED:
            raise Conflict("the invoice is already credited in full", reason="already_credited")
        if invoice.kind == InvoiceKind.PLATFORM_SALE:
            note = issue_credit_note(invoice, left, label="Avoir", reason=reason, user_id=user_id, config=config)
            _book_sale_credit(note)
            _set_status(invoice, InvoiceStatus.CREDITED)
            store_share.follow_sale(record, invoice, before=before, amount=left, whole=FinancialStatus.CANCELLED,
                                    reason=reason, user_id=user_id, config=config)
        else:
            note = store_share.credit_self_billed(invoice, left, record, reason=reason, user_id=user_id,
                                                  config=config, label="Avoir")
        _audit("billing.credit_note", reason=reason, user_id=user_id, invoice=invoice, amountCents=left,
               creditNoteNumber=note.number)
    log_event("billing.credit_note.issued", "credit note issued", "info", invoiceNumber=invoice.number,
              creditNoteNumber=note.number, amountCents=left)
    return Credited(invoice.number, note.number, left, InvoiceStatus.CREDITED.value)


def _set_status(invoice: Invoice, status: InvoiceStatus) -> None:
    now = clock.now()
    Invoice.update(status=status, updated_at=now).where(Invoice.id == invoice.id).execute()
    invoice.status = status


REFUND_ROUTE = "billing.invoice.refund"


def refund_path(invoice_number: str) -> str:
    return f"/api/billing/invoices/{invoice_number}/refund"


def refund_once(*, key: str, invoice_number: str, amount_cents: int, reason: str,
                method: PaymentMethod, user_id: str | None, config: Config) -> Refunded:
    """`refund` once per `Idempotency-Key`, scoped to the route and the invoice (API.md: an admin's
    key never depends on its active organization)."""
    body = {"amountCents": amount_cents, "reason": reason, "paymentMethod": PaymentMethod(method).value}
    try:
        held = idempotency.Key(f"invoice:{invoice_number}", REFUND_ROUTE, key,
                               idempotency.fingerprint("POST", refund_path(invoice_number), body))
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
    except Exception as exc:
        log_event("billing.refund.failed", "refund failed", "error", invoiceNumber=invoice_number,
                  amountCents=amount_cents, code="INTERNAL_ERROR", errorMessage=str(exc))
        raise
    return answer
