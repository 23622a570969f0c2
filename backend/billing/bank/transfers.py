"""Credit transfers out (API.md "The bank"): the supplier payouts and refunds not
yet in a live file, in one SEPA credit transfer initiation (pain.001.001.09) from the platform's
account: a payout to the distributor's billing-profile IBAN, a refund to the industrial's, each
with the payment order's end-to-end id and, as remittance, the number of the invoice it pays (the
self-billed invoice of a payout, the credit note of a refund). Executed on the first TARGET2 day
from today (`calendar.execution_date`)."""

from __future__ import annotations

from datetime import date

from sepaxml import SepaTransfer

from backend.billing.bank import accounts, calendar, checks
from backend.billing.bank.end_to_end import end_to_end_id
from backend.billing.bank.messages import Entry, Message, finish
from backend.billing.bank.orders import due, invoice_numbers, nothing_due, problems_of, refuse_problems
from backend.billing.models import BankFileKind, PaymentKind, PaymentOrder
from backend.config import Config

KIND = BankFileKind.CREDIT_TRANSFER
TRANSFERS = (PaymentKind.SUPPLIER_PAYOUT, PaymentKind.REFUND)


def due_orders():
    return due(PaymentOrder.kind.in_(TRANSFERS))


def _problems(order: PaymentOrder, holder: accounts.Holder, invoice_number: str | None) -> list[tuple[str, str, str]]:
    found = []
    if problem := checks.iban_problem(holder.iban):
        found.append(("creditorIban", problem))
    return problems_of(order, found, invoice_number)


def message(*, config: Config, today: date) -> Message:
    """The pain.001 of every transfer due (the orders locked until the caller's transaction ends);
    409 `nothing_due`, `bank_not_configured` or `bank_details_invalid` (nothing is written)."""
    account = accounts.platform_account(config, creditor=False)
    orders = list(due_orders().for_update(of=PaymentOrder))
    if not orders:
        raise nothing_due(KIND)
    execution_on = calendar.execution_date(today)
    holders = accounts.holders({order.organization_id for order in orders})
    numbers = invoice_numbers(orders)
    refuse_problems(KIND, [problem for order in orders
                           for problem in _problems(order, holders[order.organization_id], numbers.get(order.id))])
    document = SepaTransfer(account.sepaxml_settings(), schema="pain.001.001.09", clean=True)
    for order in orders:
        holder = holders[order.organization_id]
        document.add_payment({
            "name": holder.name, "IBAN": checks.compact_iban(holder.iban), "amount": order.amount_cents,
            "execution_date": execution_on, "description": numbers[order.id],
            "endtoend_id": end_to_end_id(order.id),
        })
    return finish(KIND, document, requested_on=execution_on,
                  entries=[Entry(order.id, order.amount_cents) for order in orders])
