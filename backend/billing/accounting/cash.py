"""The books follow the bank: what a payment order posts at each stage the bank gives it
(API.md "Cash, payouts and the bank (wave 4)", docs/accounting.md "The books follow the bank").

No payment posts to `512` before a statement line books it. A debit the platform asks of a
customer is handed to the bank with its file; a refund or a payout the platform decides is owed no
more to the customer or the distributor from then on (the platform gave the order: the payable is
settled, the money is on its way), so it is in transit from its decision, and its transfer file
changes nothing in the books:

| stage | money in (a collection; legacy: the store's funds) | money out (a refund, a payout) |
|---|---|---|
| handed to the bank (`post_in_transit`) | 511 / 411 customer (467 store) | 411 or 401 distributor / 473 |
| booked on a statement, from transit (`post_booked`) | 512 / 511 | 473 / 512 |
| booked on a statement, no file (a transfer the payer made) | 512 / 411 customer (467 store) | |
| a returned debit (`ledger.post_returned_debit`) | 411 customer / 512 | |

A debit is handed to the bank when a file takes it; a refund or a payout when it is decided.

A line a statement books that nothing explains sits in `471` (`suspense`), and a line the admin
matches later books its payment order against `471` instead of `512` (the money reached `512`
when the line was imported).

Each stage posts once per payment order (the database's `accounting_entry_once`): an order whose
file was voided keeps its in-transit entry and is not posted again by the next file (the money is
still asked for; the bank's refusal of a file is not a movement of money). An order whose payment
was booked at the request, before the books followed the bank (an entry of its booked event
exists), posts no stage at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from backend.billing.accounting import entries
from backend.billing.accounting.chart import Account, Journal
from backend.billing.accounting.entries import Entry, Line, Party
from backend.billing.accounting.ledger import Event, Piece, party_of, piece_of
from backend.billing.models import Invoice, PaymentKind, PaymentOrder
from backend.db import database

IN_TRANSIT = "in_transit"
SUSPENSE_EVENT = "bank_line_waiting"
APPLIED_EVENT = "bank_line_applied"
_CHUNK = 500
INCOMING = frozenset({PaymentKind.RESERVATION_TOTAL, PaymentKind.DEPOSIT, PaymentKind.BALANCE})


class Stage(StrEnum):
    IN_FILE = "in_file"
    BOOKED = "booked"


# The event of the entry booking a payment order's money at the bank, by its kind.
BOOKED_EVENTS = {
    PaymentKind.RESERVATION_TOTAL: Event.COLLECTION,
    PaymentKind.REFUND: Event.REFUND,
    PaymentKind.SUPPLIER_PAYOUT: Event.PAYOUT,
    PaymentKind.DEPOSIT: Event.LEGACY_COLLECTION,
    PaymentKind.BALANCE: Event.LEGACY_COLLECTION,
}
_LABELS = {
    (Stage.IN_FILE, True): "Prélèvement remis à la banque", (Stage.IN_FILE, False): "Virement émis",
    (Stage.BOOKED, True): "Encaissement", (Stage.BOOKED, False): "Décaissement",
}


@dataclass(frozen=True)
class Payment:
    """A payment order as the books see it: its piece (the invoice it pays), the third-party
    account it settles (with the party and the lettering group), and its direction."""

    order_id: str
    kind: PaymentKind
    amount_cents: int
    piece: Piece
    account: Account
    party: Party
    group: str
    incoming: bool


def payment_of(order: PaymentOrder, invoice: Invoice) -> Payment:
    """The books' view of `order`, which pays `invoice` (a sale, the credit note of a refund, a
    self-billed invoice, a legacy store invoice)."""
    kind = PaymentKind(order.kind)
    piece = piece_of(invoice)
    if kind in (PaymentKind.DEPOSIT, PaymentKind.BALANCE):  # the store's money the platform holds
        return Payment(order.id, kind, order.amount_cents, piece, Account.STORE_FUNDS, party_of(invoice.issuer),
                       invoice.reservation_id, True)
    group = invoice.credited_invoice_id if kind is PaymentKind.REFUND else invoice.id
    account = Account.SUPPLIERS if kind is PaymentKind.SUPPLIER_PAYOUT else Account.CUSTOMERS
    return Payment(order.id, kind, order.amount_cents, piece, account, piece.party, group, kind in INCOMING)


def stage_entry(payment: Payment, stage: Stage, *, day: date, from_transit: bool = False,
                cash: Account = Account.BANK, bank_line_id: str | None = None) -> Entry:
    """The entry of `payment` at `stage`: handed to the bank in a file, or booked by it (from the
    in-transit account when `from_transit`, else from the third-party account; `cash`: the account
    the statement line is in, `512`, or `471` for a line matched after its import)."""
    third = Line(payment.account, **{"credit_cents" if payment.incoming else "debit_cents": payment.amount_cents},
                 party=payment.party, letter_group=payment.group)
    transit_account = Account.RECEIPTS_IN_TRANSIT if payment.incoming else Account.PAYMENTS_IN_TRANSIT
    if stage is Stage.IN_FILE:
        other, event = Line(transit_account, **{"debit_cents" if payment.incoming else "credit_cents":
                                                payment.amount_cents}), IN_TRANSIT
        counterpart = third
    else:
        other = Line(cash, **{"debit_cents" if payment.incoming else "credit_cents": payment.amount_cents})
        counterpart = (Line(transit_account, **{"credit_cents" if payment.incoming else "debit_cents":
                                                 payment.amount_cents}) if from_transit else third)
        event = BOOKED_EVENTS[payment.kind].value
    lines = [other, counterpart] if payment.incoming else [counterpart, other]
    label = " ".join(part for part in (_LABELS[(stage, payment.incoming)], payment.piece.number, payment.party.name)
                     if part)
    return Entry(journal=Journal.BANK, event=event, day=day, label=label, lines=tuple(lines),
                 piece_ref=payment.piece.number, piece_date=payment.piece.day if payment.piece.number else None,
                 invoice_id=payment.piece.invoice_id, payment_order_id=payment.order_id,
                 reservation_id=payment.piece.reservation_id, bank_line_id=bank_line_id)


def _posted(order_ids: list[str], events: Iterable[str]) -> set[str]:
    """The orders among `order_ids` with an entry of one of `events`."""
    if not order_ids:
        return set()
    rows = database.execute_sql(
        "SELECT DISTINCT payment_order_id FROM accounting_entry WHERE payment_order_id = ANY(%s) AND event = ANY(%s)",
        (order_ids, sorted(events))).fetchall()
    return {row[0] for row in rows}


def _payments(order_ids: list[str]) -> list[Payment]:
    orders = list(PaymentOrder.select().where(PaymentOrder.id.in_(order_ids)).order_by(PaymentOrder.id))
    invoices = {invoice.id: invoice for invoice in
                Invoice.select().where(Invoice.id.in_(sorted({order.invoice_id for order in orders})))}
    return [payment_of(order, invoices[order.invoice_id]) for order in orders]


def post_in_transit(order_ids: list[str], *, day: date) -> None:
    """The orders handed to the bank on `day` (a refund or a payout when it is decided, a debit
    when a file takes it): each is in transit (once)."""
    for start in range(0, len(order_ids), _CHUNK):
        chunk = order_ids[start:start + _CHUNK]
        done = _posted(chunk, {IN_TRANSIT, *(event.value for event in BOOKED_EVENTS.values())})
        todo = [payment for payment in _payments([i for i in chunk if i not in done])]
        entries.post(*(stage_entry(payment, Stage.IN_FILE, day=day) for payment in todo))


def post_booked(booked: list[tuple[str, date, str]], *, cash: Account = Account.BANK) -> None:
    """The orders statement lines booked (order id, booking day, line id): their money moved at
    the bank (`cash`: `471` for a line that waited there)."""
    for start in range(0, len(booked), _CHUNK):
        chunk = booked[start:start + _CHUNK]
        ids = [order_id for order_id, _, _ in chunk]
        by_order = {order_id: (day, line_id) for order_id, day, line_id in chunk}
        done = _posted(ids, {event.value for event in BOOKED_EVENTS.values()})
        in_transit = _posted(ids, {IN_TRANSIT})
        entries.post(*(stage_entry(payment, Stage.BOOKED, day=by_order[payment.order_id][0],
                                   from_transit=payment.order_id in in_transit, cash=cash,
                                   bank_line_id=by_order[payment.order_id][1])
                       for payment in _payments([i for i in ids if i not in done])))


@dataclass(frozen=True)
class WaitingLine:
    """A statement line nothing explains yet: its id, direction, amount, day and the bank's
    reference (the entry's piece)."""

    line_id: str
    credit: bool
    amount_cents: int
    day: date
    reference: str


def suspense_entry(line: WaitingLine) -> Entry:
    """The line in `471` (money in: 512 / 471; money out: 471 / 512) until an admin explains it."""
    bank = Line(Account.BANK, **{"debit_cents" if line.credit else "credit_cents": line.amount_cents})
    waiting = Line(Account.SUSPENSE, **{"credit_cents" if line.credit else "debit_cents": line.amount_cents})
    label = f"{'Crédit' if line.credit else 'Débit'} bancaire en attente {line.reference}"
    return Entry(journal=Journal.BANK, event=SUSPENSE_EVENT, day=line.day, label=label[:200],
                 lines=(bank, waiting) if line.credit else (waiting, bank), piece_ref=line.reference[:80],
                 piece_date=line.day, bank_line_id=line.line_id)


def post_waiting(lines: list[WaitingLine]) -> None:
    """The lines an import left unmatched, each booked to `471`."""
    for start in range(0, len(lines), _CHUNK):
        entries.post(*(suspense_entry(line) for line in lines[start:start + _CHUNK]))


def applied_entry(line: WaitingLine, invoice: Piece) -> Entry:
    """A waiting credit applied to the customer's `invoice` by an admin: 471 / 411 customer."""
    return Entry(journal=Journal.BANK, event=APPLIED_EVENT, day=line.day,
                 label=f"Crédit bancaire {line.reference} affecté à {invoice.number}"[:200],
                 lines=(Line(Account.SUSPENSE, debit_cents=line.amount_cents),
                        Line(Account.CUSTOMERS, credit_cents=line.amount_cents, party=invoice.party,
                             letter_group=invoice.invoice_id)),
                 piece_ref=invoice.number, piece_date=invoice.day, reservation_id=invoice.reservation_id,
                 bank_line_id=line.line_id)


def post_applied(line: WaitingLine, invoice: Invoice) -> None:
    entries.post(applied_entry(line, piece_of(invoice)))
