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
| taken back, its file voided (`post_out_of_transit`) | 411 customer / 511 | stays in transit |
| booked on a statement, from transit (`post_booked`) | 512 / 511 | 473 / 512 |
| booked on a statement, no file (a transfer the payer made) | 512 / 411 customer (467 store) | |
| a returned debit, booked before (`post_returned`) | 411 customer / 512 | |
| a returned debit still in transit | 411 customer / 511, and 471 / 512 | |

A debit is handed to the bank when a file takes it; a refund or a payout when it is decided. A
booking moves the VAT of what it paid from pending to due (`vat_due`); a returned debit moves back
what its collection moved.

A line a statement books that nothing explains sits in `471` (`suspense`), and a line the admin
matches later books its payment order against `471` instead of `512` (the money reached `512`
when the line was imported). A debit the bank returns before a statement credited it (the credit
came unmatched, or comes later) takes the receivable back out of `511`; its return line waits in
`471` for that credit, which lands there too.

Each booking posts once per payment order (the database's `accounting_entry_once`). An order is in
transit while it has more in-transit entries than out-of-transit ones: a debit whose file was
voided goes back to `411` and the next file hands it to the bank again. An order whose payment
was booked at the request, before the books followed the bank (an entry of its booked event
exists), posts no stage at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date
from enum import StrEnum

from backend.billing.accounting import entries, vat_due
from backend.billing.accounting.chart import Account, Journal
from backend.billing.accounting.entries import Entry, Line, Party
from backend.billing.accounting.ledger import Event, Piece, party_of, piece_of, returned_debit_entry
from backend.billing.models import Invoice, PaymentKind, PaymentOrder
from backend.db import database

IN_TRANSIT = "in_transit"
OUT_OF_TRANSIT = "out_of_transit"
SUSPENSE_EVENT = "bank_line_waiting"
APPLIED_EVENT = "bank_line_applied"
_CHUNK = 500
INCOMING = frozenset({PaymentKind.RESERVATION_TOTAL, PaymentKind.DEPOSIT, PaymentKind.BALANCE})
# The payments of the platform's own invoices, whose VAT is due when the bank books them.
VAT_KINDS = frozenset({PaymentKind.RESERVATION_TOTAL, PaymentKind.REFUND, PaymentKind.SUPPLIER_PAYOUT})


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
                cash: Account = Account.BANK, bank_line_id: str | None = None, vat: tuple[Line, ...] = ()) -> Entry:
    """The entry of `payment` at `stage`: handed to the bank in a file, or booked by it (from the
    in-transit account when `from_transit`, else from the third-party account; `cash`: the account
    the statement line is in, `512`, or `471` for a line matched after its import), with the lines
    of the VAT its booking makes due (`vat_due`). The in-transit lines are in the invoice's
    lettering group, like the third party's."""
    third = Line(payment.account, **{"credit_cents" if payment.incoming else "debit_cents": payment.amount_cents},
                 party=payment.party, letter_group=payment.group)
    transit_account = Account.RECEIPTS_IN_TRANSIT if payment.incoming else Account.PAYMENTS_IN_TRANSIT
    if stage is Stage.IN_FILE:
        other, event = Line(transit_account, **{"debit_cents" if payment.incoming else "credit_cents":
                                                payment.amount_cents}, letter_group=payment.group), IN_TRANSIT
        counterpart = third
    else:
        other = Line(cash, **{"debit_cents" if payment.incoming else "credit_cents": payment.amount_cents})
        counterpart = (Line(transit_account, **{"credit_cents" if payment.incoming else "debit_cents":
                                                 payment.amount_cents}, letter_group=payment.group)
                       if from_transit else third)
        event = BOOKED_EVENTS[payment.kind].value
    lines = [*([other, counterpart] if payment.incoming else [counterpart, other]), *vat]
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


def _in_transit(order_ids: list[str]) -> set[str]:
    """The orders among `order_ids` in transit now: handed to the bank more often than taken back
    out of transit (a voided file), and not booked by it."""
    if not order_ids:
        return set()
    booked = sorted(event.value for event in BOOKED_EVENTS.values())
    rows = database.execute_sql(
        "SELECT payment_order_id FROM accounting_entry WHERE payment_order_id = ANY(%s)"
        " AND (event IN (%s, %s) OR event = ANY(%s)) GROUP BY payment_order_id"
        " HAVING count(*) FILTER (WHERE event = %s) > count(*) FILTER (WHERE event = %s)"
        " AND count(*) FILTER (WHERE event = ANY(%s)) = 0",
        (order_ids, IN_TRANSIT, OUT_OF_TRANSIT, booked, IN_TRANSIT, OUT_OF_TRANSIT, booked)).fetchall()
    return {row[0] for row in rows}


def _payments(order_ids: list[str]) -> list[Payment]:
    orders = list(PaymentOrder.select().where(PaymentOrder.id.in_(order_ids)).order_by(PaymentOrder.id))
    invoices = {invoice.id: invoice for invoice in
                Invoice.select().where(Invoice.id.in_(sorted({order.invoice_id for order in orders})))}
    return [payment_of(order, invoices[order.invoice_id]) for order in orders]


def post_in_transit(order_ids: list[str], *, day: date) -> None:
    """The orders handed to the bank on `day` (a refund or a payout when it is decided, a debit
    when a file takes it): each is in transit (once: not again while it is, nor once booked)."""
    for start in range(0, len(order_ids), _CHUNK):
        chunk = order_ids[start:start + _CHUNK]
        done = _posted(chunk, {event.value for event in BOOKED_EVENTS.values()}) | _in_transit(chunk)
        todo = [payment for payment in _payments([i for i in chunk if i not in done])]
        entries.post(*(stage_entry(payment, Stage.IN_FILE, day=day) for payment in todo))


def out_of_transit_entry(payment: Payment, *, day: date) -> Entry:
    """A debit taken back from the bank (its file voided): the receivable leaves `511` for `411`
    again, the reverse of its in-transit entry."""
    return Entry(journal=Journal.BANK, event=OUT_OF_TRANSIT, day=day,
                 label=" ".join(part for part in ("Prélèvement annulé", payment.piece.number, payment.party.name)
                                if part),
                 lines=(Line(payment.account, debit_cents=payment.amount_cents, party=payment.party,
                             letter_group=payment.group),
                        Line(Account.RECEIPTS_IN_TRANSIT, credit_cents=payment.amount_cents,
                             letter_group=payment.group)),
                 piece_ref=payment.piece.number, piece_date=payment.piece.day if payment.piece.number else None,
                 invoice_id=payment.piece.invoice_id, payment_order_id=payment.order_id,
                 reservation_id=payment.piece.reservation_id)


def post_out_of_transit(order_ids: list[str], *, day: date) -> None:
    """The orders of a voided file, taken back on `day`: each debit in transit goes back to the
    customer's account (a refund or a payout stays in transit: it was decided, the next file sends
    it)."""
    for start in range(0, len(order_ids), _CHUNK):
        chunk = order_ids[start:start + _CHUNK]
        entries.post(*(out_of_transit_entry(payment, day=day) for payment in _payments(sorted(_in_transit(chunk)))
                       if payment.incoming))


def _vat_positions(payments: Iterable[Payment]) -> tuple[vat_due.Positions, vat_due.Positions]:
    """The positions (sales, purchases) of the invoices `payments` pay."""
    groups = {payment.group: payment.kind for payment in payments if payment.kind in VAT_KINDS}
    return (vat_due.Positions({g for g, kind in groups.items() if kind is not PaymentKind.SUPPLIER_PAYOUT},
                              purchase=False),
            vat_due.Positions({g for g, kind in groups.items() if kind is PaymentKind.SUPPLIER_PAYOUT},
                              purchase=True))


def _vat_paid(positions: tuple[vat_due.Positions, vat_due.Positions], payment: Payment) -> tuple[Line, ...]:
    """The VAT lines of `payment` booked by the bank (money in for a collection, out for a refund,
    paid for a payout)."""
    if payment.kind not in VAT_KINDS:
        return ()
    sales, purchases = positions
    if payment.kind is PaymentKind.SUPPLIER_PAYOUT:
        return tuple(purchases.paid(payment.group, payment.amount_cents))
    return tuple(sales.paid(payment.group, payment.amount_cents if payment.incoming else -payment.amount_cents))


def post_booked(booked: list[tuple[str, date, str]], *, cash: Account = Account.BANK) -> None:
    """The orders statement lines booked (order id, booking day, line id): their money moved at
    the bank (`cash`: `471` for a line that waited there), and the VAT of what they paid is due."""
    for start in range(0, len(booked), _CHUNK):
        chunk = booked[start:start + _CHUNK]
        ids = [order_id for order_id, _, _ in chunk]
        by_order = {order_id: (day, line_id) for order_id, day, line_id in chunk}
        done = _posted(ids, {event.value for event in BOOKED_EVENTS.values()})
        in_transit = _in_transit(ids)
        payments = _payments([i for i in ids if i not in done])
        positions = _vat_positions(payments)
        entries.post(*(stage_entry(payment, Stage.BOOKED, day=by_order[payment.order_id][0],
                                   from_transit=payment.order_id in in_transit, cash=cash,
                                   bank_line_id=by_order[payment.order_id][1],
                                   vat=_vat_paid(positions, payment))
                       for payment in payments))


def post_returned(order: PaymentOrder, invoice: Invoice, *, day: date, bank_line_id: str,
                  cash: Account = Account.BANK) -> None:
    """The direct debit `order` of the sale `invoice` returned by the bank on `day`: booked
    before, its money leaves the bank and the VAT its collection made due is pending again; still
    in transit (the bank returned it before a statement credited it), the receivable comes back
    out of `511` and the return line waits in `471` for the credit it takes back (`ledger`)."""
    from_transit = order.id in _in_transit([order.id])
    vat: list[Line] = []
    if not from_transit:
        moved = database.execute_sql(
            "SELECT coalesce(sum(l.credit_cents - l.debit_cents), 0) FROM accounting_entry e"
            " JOIN accounting_line l ON l.entry_id = e.id AND l.account = %s"
            " WHERE e.payment_order_id = %s AND e.event = %s",
            (Account.VAT_COLLECTED.value, order.id, BOOKED_EVENTS[PaymentKind(order.kind)].value)).fetchone()[0]
        vat = vat_due.move_lines(invoice.id, -int(moved), purchase=False)
    entry = returned_debit_entry(piece_of(invoice), amount_cents=order.amount_cents, payment_order_id=order.id,
                                 day=day, cash=cash, from_transit=from_transit, vat=tuple(vat))
    entries.post(replace(entry, bank_line_id=bank_line_id))


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


def applied_entry(line: WaitingLine, invoice: Piece, *, vat: tuple[Line, ...] = ()) -> Entry:
    """A waiting credit applied to the customer's `invoice` by an admin: 471 / 411 customer, and
    the VAT of what it paid due (`vat`)."""
    return Entry(journal=Journal.BANK, event=APPLIED_EVENT, day=line.day,
                 label=f"Crédit bancaire {line.reference} affecté à {invoice.number}"[:200],
                 lines=(Line(Account.SUSPENSE, debit_cents=line.amount_cents),
                        Line(Account.CUSTOMERS, credit_cents=line.amount_cents, party=invoice.party,
                             letter_group=invoice.invoice_id), *vat),
                 piece_ref=invoice.number, piece_date=invoice.day, reservation_id=invoice.reservation_id,
                 bank_line_id=line.line_id)


def post_applied(line: WaitingLine, invoice: Invoice) -> None:
    vat = vat_due.Positions([invoice.id], purchase=False).paid(invoice.id, line.amount_cents)
    entries.post(applied_entry(line, piece_of(invoice), vat=tuple(vat)))
