"""Supplier payout (spec C `supplier_settlement_pending` -> `supplier_settlement_paid`; the route is
decided in docs/billing.md): the platform pays the distributor its self-billed invoice.

`POST /api/admin/billing/reservations/{id}/payout` (`billing.manage.all`, `Idempotency-Key`), one
transaction under the financial record's row lock: the reservation is `supplier_settlement_pending`
with its live `supplier_self_billed` invoice; what is due is that invoice less its credit notes
(409 `nothing_to_pay` when credited in full), including VAT on the payment order, less what the
distributor owes back (`store_share.take_debt`: supplier credit notes issued after an earlier
payout), shown as `deductedCents`; when the debt takes all of it, no payment order is made.
Like a collection, no payment service provider is called: the `supplier_payout` payment order
(`bank_transfer` to the distributor) is created `pending` and moved to `paid` at once (the
partial unique index `billing_payment_order_one_payout` admits one live payout per self-billed
invoice). The payout is booked (debit 401 distributor, credit 473 in transit until the bank
books it, `accounting.cash`; the deduction 401 against 401, `accounting.ledger`), the invoice
becomes `paid`, the financial status `supplier_settlement_paid`, and an audit entry records the actor.

Payout timing (docs/self-billing.md "Payout timing"): the self-billed invoice must be accepted
by the distributor, expressly or tacitly (30 days after it was e-mailed), or its contest rejected
by an admin; else 409 `self_billing_not_accepted`, unless the admin pays earlier with a `reason`
(audited, `billing.supplier.payout.early` logged). An open contest blocks it whatever the reason:
409 `self_billing_contested` until an admin resolves it.

Money received, accounts reviewed (API.md, docs/bank.md "Payouts: money received, accounts
reviewed"): 409 `customer_payment_not_received` until a bank statement settled the customer's
payment of the sale (`waiting_for_money` lists those waiting, logged daily), 409 `kyb_not_approved`
while the distributor's KYB is not approved; the payment order records the distributor's account
as approved at KYB (`creditor_accounts`), the one the credit transfer file pays.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from datetime import datetime

from backend import clock
from backend.billing import creditor_accounts, idempotency, records, store_share
from backend.billing.accounting import cash
from backend.billing.accounting.entries import paris_day
from backend.billing.models import (
    AcceptanceStatus,
    AuditEntry,
    FinancialRecord,
    FinancialStatus,
    Invoice,
    InvoiceStatus,
    PaymentKind,
    PaymentMethod,
    PaymentOrder,
    PaymentStatus,
    SelfBilledAcceptance,
    Settlement,
)
from backend.context import current_request_id
from backend.errors import Conflict, DomainError, NotFound
from backend.identity.models import KybStatus, Organization
from backend.logs import log_event

ROUTE = "billing.reservation.payout"
SCOPE = "billing.supplier.payout"


def payout_path(reservation_id: str) -> str:
    return f"/api/admin/billing/reservations/{reservation_id}/payout"


@dataclass(frozen=True)
class PaidOut:
    """A payout's answer: the distributor paid its self-billed invoice less its credit notes."""

    reservation_id: str
    payment_order_id: str | None  # None when the distributor's debt takes all of it
    invoice_number: str
    organization_id: str
    amount_excl_tax_cents: int
    amount_cents: int  # the payment order, including VAT
    deducted_cents: int  # the distributor's debt kept back, including VAT
    financial_status: str
    payment_status: str
    idempotent: bool = False


ACCEPTED = frozenset({AcceptanceStatus.ACCEPTED, AcceptanceStatus.TACITLY_ACCEPTED})


def _check_acceptance(invoice: Invoice, early_reason: str | None) -> bool:
    """Whether the distributor accepted the invoice (or its contest was rejected); an open contest
    is 409 `self_billing_contested`, a pending invoice 409 `self_billing_not_accepted` without an
    `early_reason`. False: paid early."""
    # FOR SHARE: a contest being recorded now is waited for (it locks the row to write it).
    row = (SelfBilledAcceptance.select().where(SelfBilledAcceptance.invoice_id == invoice.id)
           .for_update("FOR SHARE").first())
    status = AcceptanceStatus(row.status) if row else AcceptanceStatus.PENDING
    if status == AcceptanceStatus.CONTESTED and row.resolution is None:
        raise Conflict("the distributor contests this self-billed invoice: the payout waits for an admin's "
                       "resolution", reason="self_billing_contested", invoiceNumber=invoice.number)
    if status in ACCEPTED or status == AcceptanceStatus.CONTESTED:  # accepted, or its contest rejected
        return True
    if not early_reason:
        raise Conflict("the distributor has not accepted this self-billed invoice yet (30 days after it was "
                       "e-mailed at the latest); an admin may pay earlier with a reason",
                       reason="self_billing_not_accepted", invoiceNumber=invoice.number)
    return False


def _check_kyb(distributor: str) -> None:
    """409 `kyb_not_approved` while the distributor's KYB is not approved (an IBAN change sends it
    back to review): nothing is paid to an account an admin has not approved. The organization row
    is shared-locked, so a review cannot commit before this payout."""
    organization = (Organization.select(Organization.kyb_status).where(Organization.id == distributor)
                    .for_update("FOR SHARE").first())
    if organization is None or organization.kyb_status != KybStatus.APPROVED:
        raise Conflict("the distributor's KYB is not approved (its bank details are under review): no payout",
                       reason="kyb_not_approved", organizationId=distributor,
                       kybStatus=organization.kyb_status if organization else None)


def _check_money_received(reservation_id: str) -> None:
    """409 `customer_payment_not_received` until a bank statement settled the customer's payment of
    the sale (a bank transfer booked, a direct debit booked and not returned): the store share is
    paid from money received, never from money asked for."""
    if not store_share.customer_paid(reservation_id):
        raise Conflict("the customer's payment of this sale is not received yet (no bank statement settled it): "
                       "the payout waits for the money", reason="customer_payment_not_received",
                       reservationId=reservation_id)


def _payout(reservation_id: str, user_id: str | None, early_reason: str | None = None) -> PaidOut:
    record = records.locked_record(reservation_id)
    if record is None:
        raise NotFound("reservation not found")
    if record.financial_status != FinancialStatus.SUPPLIER_SETTLEMENT_PENDING:
        raise Conflict(f"the reservation is not awaiting its supplier payout (financial status "
                       f"{record.financial_status})", reason="not_settlement_pending",
                       financialStatus=record.financial_status)
    invoice = store_share.live_self_billed(reservation_id)
    if invoice is None:  # only self-billing moves a record to `supplier_settlement_pending`
        raise Conflict("the reservation has no self-billed invoice", reason="not_self_billed")
    due_excl, due_incl = store_share.due_of(invoice)
    if due_excl <= 0:
        raise Conflict("the self-billed invoice is credited in full: nothing to pay", reason="nothing_to_pay",
                       invoiceNumber=invoice.number)
    distributor = invoice.issuer_organization_id
    _check_kyb(distributor)
    _check_money_received(reservation_id)
    accepted = _check_acceptance(invoice, early_reason)
    kept = store_share.take_debt(distributor, store_share.Debt(due_excl, due_incl))
    paid_excl, paid_incl = due_excl - kept.excl_tax_cents, due_incl - kept.cents
    now = clock.now()
    order = None
    if paid_incl > 0:
        order = PaymentOrder.create(
            reservation_id=reservation_id, invoice=invoice.id, organization_id=distributor,
            kind=PaymentKind.SUPPLIER_PAYOUT, method=PaymentMethod.BANK_TRANSFER, status=PaymentStatus.PENDING,
            amount_cents=paid_incl, created_by_user_id=user_id, **creditor_accounts.creditor_account(distributor),
        )
        (PaymentOrder.update(status=PaymentStatus.PAID, paid_at=now, updated_at=now)  # pending -> paid
         .where(PaymentOrder.id == order.id).execute())
        cash.post_in_transit([order.id], day=paris_day(now))
    store_share.record_deduction(distributor, kept, invoice=invoice, payment_order_id=order.id if order else None,
                                day=paris_day(now))
    if invoice.status == InvoiceStatus.ISSUED:
        Invoice.update(status=InvoiceStatus.PAID, paid_at=now, updated_at=now).where(Invoice.id == invoice.id).execute()
    records.move(record, FinancialStatus.SUPPLIER_SETTLEMENT_PAID)
    AuditEntry.create(action=SCOPE, actor_user_id=user_id, reason="supplier payout" if accepted else early_reason,
                      reservation_id=reservation_id, invoice_id=invoice.id,
                      payment_order_id=order.id if order else None,
                      details={"amountCents": paid_incl, "amountExclTaxCents": paid_excl, "deductedCents": kept.cents,
                               "beforeAcceptance": not accepted}, request_id=current_request_id())
    if not accepted:
        log_event(f"{SCOPE}.early", "supplier paid before accepting its self-billed invoice", "warn",
                  reservationId=reservation_id, invoiceNumber=invoice.number, userId=user_id, reason=early_reason)
    return PaidOut(reservation_id, order.id if order else None, invoice.number, distributor, paid_excl, paid_incl,
                   kept.cents, record.financial_status, PaymentStatus.PAID.value)


WAITING_LIMIT = 500


@dataclass(frozen=True)
class Waiting:
    """A payout waiting for the customer's money: its sale, the collection and its age."""

    reservation_id: str
    sale_invoice_number: str
    self_billed_invoice_number: str | None
    distributor_organization_id: str | None
    payment_order_id: str
    method: str
    settlement: str
    amount_cents: int
    collected_at: datetime
    age_days: int


def waiting_for_money() -> list[Waiting]:
    """The payouts waiting for the customer's money, oldest collection first (the admin's view and
    the daily log): each reservation self-billed (`supplier_settlement_pending`) whose sale's payment
    no statement has settled yet, with its sale, the collection and its age in days."""
    now = clock.now()
    settled = (PaymentOrder.select(PaymentOrder.reservation_id)
               .where(PaymentOrder.kind == PaymentKind.RESERVATION_TOTAL,
                      PaymentOrder.settlement == Settlement.SETTLED))
    pending = (FinancialRecord.select(FinancialRecord.reservation_id)
               .where(FinancialRecord.financial_status == FinancialStatus.SUPPLIER_SETTLEMENT_PENDING))
    orders = (PaymentOrder.select(PaymentOrder, Invoice.number.alias("sale_number"))
              .join(Invoice, on=PaymentOrder.invoice == Invoice.id)
              .where(PaymentOrder.kind == PaymentKind.RESERVATION_TOTAL, PaymentOrder.status == PaymentStatus.PAID,
                     PaymentOrder.reservation_id.in_(pending), PaymentOrder.reservation_id.not_in(settled))
              .order_by(PaymentOrder.paid_at, PaymentOrder.id).limit(WAITING_LIMIT).objects())
    items = []
    for order in orders:
        self_billed = store_share.live_self_billed(order.reservation_id)
        items.append(Waiting(order.reservation_id, order.sale_number, self_billed.number if self_billed else None,
                             self_billed.issuer_organization_id if self_billed else None, order.id, order.method,
                             order.settlement, order.amount_cents, order.paid_at, (now - order.paid_at).days))
    return items


def log_waiting_for_money() -> int:
    """The daily line listing the payouts waiting for money (`billing.supplier.payout.waiting`)."""
    items = waiting_for_money()
    if items:
        log_event(f"{SCOPE}.waiting", "payouts waiting for the customer's money", "info", count=len(items),
                  oldestDays=max(item.age_days for item in items),
                  reservationIds=[item.reservation_id for item in items[:50]])
    return len(items)


def pay_out(*, reservation_id: str, key: str, user_id: str | None, reason: str | None = None) -> PaidOut:
    """The payout once per `Idempotency-Key`, scoped to the route and the reservation (API.md);
    `reason` pays before the distributor's acceptance (see `_check_acceptance`)."""
    fields = {"reservationId": reservation_id}
    reason = (reason or "").strip() or None
    log_event(f"{SCOPE}.requested", "supplier payout requested", "info", **fields)
    try:
        held = idempotency.Key(f"reservation:{reservation_id}", ROUTE, key,
                               idempotency.fingerprint("POST", payout_path(reservation_id),
                                                       {"reason": reason} if reason else {}))
        with idempotency.claim(held) as claim:
            if claim.replay is not None:
                return replace(PaidOut(**claim.replay), idempotent=True)
            answer = _payout(reservation_id, user_id, reason)
            claim.store(asdict(answer))
    except DomainError as exc:
        log_event(f"{SCOPE}.failed", "supplier payout refused", "warn", **fields, code=exc.code,
                  errorMessage=exc.message, reason=exc.details.get("reason"))
        raise
    except Exception as exc:
        log_event(f"{SCOPE}.failed", "supplier payout failed", "error", **fields, code="INTERNAL_ERROR",
                  errorMessage=str(exc))
        raise
    log_event(f"{SCOPE}.paid", "supplier paid out", "info", **fields, paymentOrderId=answer.payment_order_id,
              invoiceNumber=answer.invoice_number, amountCents=answer.amount_cents,
              deductedCents=answer.deducted_cents)
    return answer
