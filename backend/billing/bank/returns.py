"""Returned direct debits (R-transactions, docs/bank.md "Returned debits").

A direct debit the bank returns with its ISO 20022 reason code: in the statement import's (or the
manual match's) transaction, the payment order goes `failed` with the code (settlement
`returned`, the booking date of the return), the bank entry is reversed in the books (`BQ`: 411
debited again, 512 credited, the VAT its collection made due pending again; or 511 credited, for a
debit returned before a statement credited it: `accounting.cash.post_returned`), the
reservation's financial status goes back from `reservation_total_paid` to `reservation_total_due`
(migration 146's transition) so the retry pass or the admin route collects it again on the same
invoice (`backend.billing.collection.again`), and an audit entry is written. The caller logs
`billing.reservation.collect.failed` once committed.

Automatic retries of a mandate stop (`billing_sepa_mandate.retries_stopped_at`, an admin decides)
at its second return within `RETRY_WINDOW`, or at once for a reason that says the mandate or the
account cannot be debited again (`NO_RETRY`). A reservation already self-billed, refunded or
credited when its debit comes back keeps its financial status: the order and the books are
reversed, and the audit entry says an admin decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from backend import clock
from backend.billing import records
from backend.billing.accounting import cash as books
from backend.billing.accounting.chart import Account
from backend.billing.bank import settlement
from backend.billing.models import (
    AuditEntry,
    FinancialStatus,
    Invoice,
    PaymentOrder,
    PaymentStatus,
    SepaMandate,
    Settlement,
)
from backend.errors import Conflict

RETRY_WINDOW = timedelta(days=90)
AUDIT_ACTION = "billing.bank.debit_returned"

# The ISO 20022 external return reasons a SEPA direct debit comes back with (EPC guidance).
REASONS = {
    "AC01": "Incorrect account number",
    "AC04": "Closed account number",
    "AC06": "Blocked account",
    "AC13": "Debtor account is a consumer account",
    "AG01": "Transaction forbidden on this account",
    "AG02": "Invalid bank operation code",
    "AM04": "Insufficient funds",
    "AM05": "Duplicate collection",
    "BE05": "Creditor identifier incorrect",
    "CNOR": "Creditor bank is not registered",
    "DNOR": "Debtor bank is not registered",
    "FF01": "Invalid file format",
    "MD01": "No valid mandate",
    "MD02": "Mandate data missing or incorrect",
    "MD06": "Refund requested by the debtor (disputed)",
    "MD07": "Debtor deceased",
    "MS02": "Refused by the debtor, reason not specified",
    "MS03": "Reason not specified by the bank",
    "RC01": "Bank identifier incorrect",
    "RR01": "Missing debtor account or identification",
    "RR02": "Missing debtor name or address",
    "RR03": "Missing creditor name or address",
    "RR04": "Regulatory reason",
    "SL01": "Specific service offered by the debtor bank",
}
# Reasons after which a new debit on the same mandate would fail again: no automatic retry.
NO_RETRY = frozenset({"AC01", "AC04", "AC06", "AC13", "AG01", "MD01", "MD07", "BE05", "RR01", "RR04"})


@dataclass(frozen=True)
class Returned:
    payment_order_id: str
    reservation_id: str | None
    code: str
    due_again: bool
    retries_stopped: bool


def apply(order: PaymentOrder, *, code: str, day: date, line_id: str, user_id: str | None,
          cash: Account = Account.BANK) -> Returned:
    """Return the direct debit `order` (locked by the caller's transaction) with the reason `code`,
    booked on `day` by the statement line `line_id` (whose money is in `cash`: `512`, or `471`
    for a line that waited there before an admin matched it)."""
    label = REASONS.get(code, "Returned by the bank")
    if not settlement.mark_returned(order.id, reason_code=code, returned_on=day):
        raise Conflict("the bank returned this payment order already", reason="payment_order_returned")
    (PaymentOrder.update(status=PaymentStatus.FAILED, failure_code=code, failure_message=label, paid_at=None,
                         updated_at=clock.now())
     .where(PaymentOrder.id == order.id).execute())
    invoice = Invoice.get_by_id(order.invoice_id)
    books.post_returned(order, invoice, day=day, bank_line_id=line_id, cash=cash)
    record = records.locked_record(order.reservation_id) if order.reservation_id else None
    due_again = record is not None and record.financial_status == FinancialStatus.RESERVATION_TOTAL_PAID
    if due_again:
        records.move(record, FinancialStatus.RESERVATION_TOTAL_DUE)
    stopped = _stop_retries(order, code, day)
    AuditEntry.create(action=AUDIT_ACTION, actor_user_id=user_id, reason=f"direct debit returned: {code} {label}",
                      reservation_id=order.reservation_id, invoice_id=order.invoice_id, payment_order_id=order.id,
                      details={"code": code, "label": label, "bookingDate": day.isoformat(), "lineId": line_id,
                               "dueAgain": due_again, "retriesStopped": stopped,
                               **({} if due_again or record is None
                                  else {"financialStatus": record.financial_status, "adminDecides": True})})
    return Returned(order.id, order.reservation_id, code, due_again, stopped)


def _stop_retries(order: PaymentOrder, code: str, day: date) -> bool:
    """Stop the automatic retries of the order's mandate at its second return within
    `RETRY_WINDOW` (or at once for a `NO_RETRY` reason); whether they are stopped now."""
    if not order.mandate_ref:
        return False
    earlier = PaymentOrder.select().where(
        PaymentOrder.mandate_ref == order.mandate_ref, PaymentOrder.id != order.id,
        PaymentOrder.settlement == Settlement.RETURNED,
        PaymentOrder.returned_on.between(day - RETRY_WINDOW, day + RETRY_WINDOW)).exists()
    if not earlier and code not in NO_RETRY:
        return False
    (SepaMandate.update(retries_stopped_at=clock.now())
     .where(SepaMandate.mandate_ref == order.mandate_ref, SepaMandate.retries_stopped_at.is_null()).execute())
    return True
