"""Direct debits out (API.md "The bank"): the `sepa_dd` collections not yet in a
live file, in one SEPA Core direct debit initiation (pain.008.001.08).

Each debit quotes the mandate the customer signed: its reference (RUM, `backend.sepa.
mandate_reference` of the onboarding envelope) and its signature date, the mandate's IBAN, the
payment order's end-to-end id and the invoice number as remittance. Its sequence type is FRST for
a mandate's first debit in a live file (a voided file does not count) and RCUR after; a mandate
unused for 36 months (no debit collected in the 36 months before this one) starts again at FRST.
In one file, a new mandate's first debit is FRST and its others RCUR. The collection date is the
first the scheme allows (`calendar.collection_date`).

A debit is held back (`orders.Held`), `unsent`, when its mandate has ended since the collection
(a new IBAN, a new signed mandate: logged, `billing.bank.debit_held_back`; no debit is ever sent
on an ended mandate), while its organization's KYB is not approved, or when a value it carries
fails its check; the others go.
"""

from __future__ import annotations

from datetime import date

from peewee import fn
from sepaxml import SepaDD

from backend.billing.accounting.entries import paris_day
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
from backend.billing.models import (
    BankFile,
    BankFileKind,
    BankFileOrder,
    BankFileStatus,
    MandateStatus,
    PaymentKind,
    PaymentMethod,
    PaymentOrder,
    SepaMandate,
)
from backend.config import Config
from backend.logs import log_event
from backend.sepa import mandate_reference

KIND = BankFileKind.DIRECT_DEBIT
COLLECTIONS = (PaymentKind.RESERVATION_TOTAL, PaymentKind.DEPOSIT, PaymentKind.BALANCE)
MANDATE_ENDED = "mandate_ended"
MANDATE_LAPSE_YEARS = 3  # 36 months unused: the mandate starts again at FRST


def due_orders():
    return due(PaymentOrder.kind.in_(COLLECTIONS), PaymentOrder.method == PaymentMethod.SEPA_DD)


def lapses_on(last_collection: date) -> date:
    """The day a mandate last used on `last_collection` counts as unused for 36 months."""
    try:
        return last_collection.replace(year=last_collection.year + MANDATE_LAPSE_YEARS)
    except ValueError:  # 29 February
        return last_collection.replace(year=last_collection.year + MANDATE_LAPSE_YEARS, day=28)


def last_collections(mandate_refs: set[str]) -> dict[str, date]:
    """Each mandate's latest collection date in a live direct debit file."""
    rows = (BankFileOrder
            .select(PaymentOrder.mandate_ref, fn.MAX(BankFile.requested_on))
            .join(BankFile, on=(BankFileOrder.file_id == BankFile.id))
            .switch(BankFileOrder).join(PaymentOrder)
            .where(BankFileOrder.file_kind == KIND, BankFileOrder.file_status == BankFileStatus.LIVE,
                   PaymentOrder.mandate_ref.in_(list(mandate_refs)))
            .group_by(PaymentOrder.mandate_ref)
            .tuples())
    return dict(rows)


def sequence_types(orders: list[PaymentOrder], *, collection_on: date) -> dict[str, str]:
    """FRST or RCUR for each order (by id), in the orders' order."""
    last = last_collections({order.mandate_ref for order in orders})
    started: set[str] = set()
    types = {}
    for order in orders:
        previous = last.get(order.mandate_ref)
        fresh = previous is None or collection_on >= lapses_on(previous)
        types[order.id] = "FRST" if fresh and order.mandate_ref not in started else "RCUR"
        started.add(order.mandate_ref)
    return types


def holds(orders: list[PaymentOrder], mandates: dict[str, SepaMandate]):
    """The `hold(order)` of a run over `orders` (`orders.split`): an ended mandate first (no debit
    is ever sent on it), then the organization's KYB, then the values the debit carries."""
    approved, numbers = kyb_approved(orders), invoice_numbers(orders)

    def hold(order: PaymentOrder) -> Held | None:
        mandate = mandates[order.mandate_ref]
        if mandate.status != MandateStatus.ACTIVE:
            return Held(order.id, MANDATE_ENDED)
        if order.organization_id not in approved:
            return Held(order.id, KYB_NOT_APPROVED)
        found = []
        if problem := checks.mandate_reference_problem(order.mandate_ref):
            found.append(("mandateReference", problem))
        elif mandate.signature_request_id and order.mandate_ref != mandate_reference(mandate.signature_request_id):
            found.append(("mandateReference", "not the reference printed on the mandate the customer signed"))
        if problem := checks.iban_problem(mandate.iban):
            found.append(("debtorIban", problem))
        return first_hold(order, found, numbers.get(order.id))
    return hold


def mandates_of(orders: list[PaymentOrder]) -> dict[str, SepaMandate]:
    return {m.mandate_ref: m for m in SepaMandate.select().where(
        SepaMandate.mandate_ref.in_([order.mandate_ref for order in orders]))}


def message(*, config: Config, today: date) -> tuple[Message, list[Held]]:
    """The pain.008 of every debit that can go (the orders locked until the caller's transaction
    ends), and those held back; 409 `nothing_due` (with `details.held`) when none can go,
    `bank_not_configured` (nothing is written)."""
    account = accounts.platform_account(config, creditor=True)
    collection_on = calendar.collection_date(today)
    orders = list(due_orders().for_update(of=PaymentOrder))
    mandates = mandates_of(orders)
    going, held = split(orders, holds(orders, mandates))
    ended = [item.payment_order_id for item in held if item.reason == MANDATE_ENDED]
    if ended:
        log_event("billing.bank.debit_held_back", "debits held back: their SEPA mandate has ended", "warn",
                  paymentOrderIds=ended)
    if not going:
        raise nothing_due(KIND, held)
    numbers = invoice_numbers(going)
    names = accounts.holder_names({order.organization_id for order in going})
    types = sequence_types(going, collection_on=collection_on)
    document = SepaDD({**account.sepaxml_settings(), "creditor_id": account.creditor_id, "instrument": "CORE"},
                      schema="pain.008.001.08", clean=True)
    for order in going:
        mandate = mandates[order.mandate_ref]
        document.add_payment({
            "name": names[order.organization_id], "IBAN": checks.compact_iban(mandate.iban),
            "amount": order.amount_cents, "type": types[order.id], "collection_date": collection_on,
            "mandate_id": order.mandate_ref, "mandate_date": paris_day(mandate.signed_at),
            "description": numbers[order.id], "endtoend_id": end_to_end_id(order.id),
        })
    entries = [Entry(order.id, order.amount_cents, types[order.id]) for order in going]
    return finish(KIND, document, requested_on=collection_on, entries=entries), held
