"""Credit transfers out (API.md "The bank", "Payouts and refunds only move money received, to
accounts reviewed"): the supplier payouts and refunds not yet in a live file, in one SEPA credit
transfer initiation (pain.001.001.09) from the platform's account. Each pays the account its
payment order recorded when it was made (`creditor_accounts`: the creditor's account as approved
at KYB, never the live billing profile; its bank's BIC as creditor agent when one was approved,
else IBAN only), with the payment order's end-to-end id and, as remittance, the number of the
invoice it pays (the self-billed invoice of a payout, the credit note of a refund). Executed on
the first TARGET2 day from today (`calendar.execution_date`).

An order is held back (`orders.Held`) when the account it recorded was voided since
(`creditor_account_voided`: its organization was given back after squatting), while its
creditor's KYB is not approved (an IBAN change sent it back to review), when it records no account
(`creditor_account_missing`) or one failing its check; the others go. `refresh_account` is the
admin's explicit action that gives a held order the account approved since it was made.
"""

from __future__ import annotations

from datetime import date

from sepaxml import SepaTransfer

from backend import clock
from backend.billing import creditor_accounts
from backend.billing.bank import accounts, calendar, checks
from backend.billing.bank.end_to_end import end_to_end_id
from backend.billing.bank.messages import Entry, Message, finish
from backend.billing.bank.orders import (
    KYB_NOT_APPROVED,
    Held,
    due,
    first_hold,
    invoice_numbers,
    kyb_approved,
    nothing_due,
    split,
)
from backend.billing.models import AuditEntry, BankFileKind, PaymentKind, PaymentOrder, Settlement
from backend.config import Config
from backend.context import current_request_id
from backend.db import transaction
from backend.errors import Conflict, NotFound
from backend.identity import bank_details

KIND = BankFileKind.CREDIT_TRANSFER
TRANSFERS = (PaymentKind.SUPPLIER_PAYOUT, PaymentKind.REFUND)
ACCOUNT_MISSING = "creditor_account_missing"
ACCOUNT_VOIDED = "creditor_account_voided"
REFRESH_ACTION = "billing.bank.order.account_refreshed"


def due_orders():
    return due(PaymentOrder.kind.in_(TRANSFERS))


def holds(orders: list[PaymentOrder]):
    """The `hold(order)` of a run over `orders` (`orders.split`)."""
    approved, numbers = kyb_approved(orders), invoice_numbers(orders)
    voided = bank_details.voided_at({order.organization_id for order in orders})

    def hold(order: PaymentOrder) -> Held | None:
        if order.organization_id in voided and (order.creditor_approved_at or order.created_at) <= voided[
                order.organization_id]:
            return Held(order.id, ACCOUNT_VOIDED)
        if order.organization_id not in approved:
            return Held(order.id, KYB_NOT_APPROVED)
        if not order.creditor_iban:
            return Held(order.id, ACCOUNT_MISSING)
        found = [("creditorIban", problem)] if (problem := checks.iban_problem(order.creditor_iban)) else []
        if order.creditor_bic and (problem := checks.bic_problem(order.creditor_bic)):
            found.append(("creditorBic", problem))
        return first_hold(order, found, numbers.get(order.id))
    return hold


def message(*, config: Config, today: date) -> tuple[Message, list[Held]]:
    """The pain.001 of every transfer that can go (the orders locked until the caller's
    transaction ends), and those held back; 409 `nothing_due` (with `details.held`) when none can
    go, `bank_not_configured` (nothing is written)."""
    account = accounts.platform_account(config, creditor=False)
    orders = list(due_orders().for_update(of=PaymentOrder))
    going, held = split(orders, holds(orders))
    if not going:
        raise nothing_due(KIND, held)
    execution_on = calendar.execution_date(today)
    numbers = invoice_numbers(going)
    document = SepaTransfer(account.sepaxml_settings(), schema="pain.001.001.09", clean=True)
    for order in going:
        document.add_payment({
            "name": order.creditor_name, "IBAN": checks.compact_iban(order.creditor_iban),
            "amount": order.amount_cents, "execution_date": execution_on, "description": numbers[order.id],
            "endtoend_id": end_to_end_id(order.id),
            **({"BIC": checks.compact_bic(order.creditor_bic)} if order.creditor_bic else {}),  # CdtrAgt
        })
    return finish(KIND, document, requested_on=execution_on,
                  entries=[Entry(order.id, order.amount_cents) for order in going]), held


def refresh_account(order_id: str, *, user_id: str | None) -> PaymentOrder:
    """An unsent payout or refund given its creditor's account as approved now (the admin's
    explicit action, audited with both accounts masked): 404 for an unknown order, 409
    `not_a_held_transfer` for an order that is not an unsent transfer, `kyb_not_approved` while the
    creditor's KYB is not approved (nothing approved to take)."""
    with transaction():
        order = PaymentOrder.select().where(PaymentOrder.id == order_id).for_update().first()
        if order is None:
            raise NotFound("payment order not found", paymentOrderId=order_id)
        if order.kind not in TRANSFERS or order.settlement != Settlement.UNSENT:
            raise Conflict("only a payout or a refund not yet in a file takes a new account",
                           reason="not_a_held_transfer", paymentOrderId=order_id)
        if order.organization_id not in kyb_approved([order]):
            raise Conflict("the creditor's KYB is not approved: no account to take yet", reason=KYB_NOT_APPROVED,
                           paymentOrderId=order_id)
        account = creditor_accounts.creditor_account(order.organization_id, paid_invoice_id=_paid_invoice(order))
        before = order.creditor_iban
        (PaymentOrder.update(**account, updated_at=clock.now()).where(PaymentOrder.id == order.id).execute())
        AuditEntry.create(action=REFRESH_ACTION, actor_user_id=user_id, reservation_id=order.reservation_id,
                          payment_order_id=order.id, reason="creditor account refreshed from the approved profile",
                          details={"accountBefore": bank_details.mask_iban(before),
                                   "accountAfter": bank_details.mask_iban(account["creditor_iban"])},
                          request_id=current_request_id())
    return PaymentOrder.get_by_id(order_id)


def _paid_invoice(order: PaymentOrder) -> str | None:
    """The sale whose payment a refund gives back (its credit note's credited invoice)."""
    if order.kind != PaymentKind.REFUND or order.invoice_id is None:
        return None
    return (PaymentOrder.select(PaymentOrder.invoice).where(
        PaymentOrder.reservation_id == order.reservation_id, PaymentOrder.kind == PaymentKind.RESERVATION_TOTAL)
        .order_by(PaymentOrder.created_at.desc()).scalar())
