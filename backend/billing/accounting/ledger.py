"""The postings: what each financial event writes in the books (docs/accounting.md, "Postings").

One function per event, each posting one balanced entry (`entries.Entry`) in the caller's
transaction, in the journal the event belongs to, with its piece (the invoice, or for a payment
the invoice it settles) and its date (the event's day in Europe/Paris). Amounts: invoices are
excluding tax, their VAT computed by `backend.billing.vat` from the rate frozen on them; payments
are what moved, including VAT.

| event | journal | debit | credit |
|---|---|---|---|
| sale invoice (`platform_sale`) | VE | 411 customer (incl. VAT) | 706 (excl.), 44574 (VAT) |
| customer credit note | VE | 706 (excl.), 44574 (VAT) | 411 customer (incl.) |
| reverse-charged sale, its credit note | VE | as above, on 7062 and without VAT | |
| self-billed invoice | AC | 604 (excl.), 44564 (VAT) | 401 distributor (incl.) |
| supplier credit note | AC | 401 distributor (incl.) | 604 (excl.), 44564 (VAT) |
| distributor's debt deducted from a payout | OD | 401 (the new invoice) | 401 (the debt's invoice) |
| legacy commission invoice | VE | 411 store (incl.) | 706 (excl.), 44571 (VAT) |
| legacy commission taken from the store's funds | OD | 467 store | 411 store |

The VAT of services is due when the price is paid (CGI art. 269-2-c; its deduction, art. 271): an
invoice's VAT waits in `44574` (collected) or `44564` (deductible) until the bank books the money
(`vat_due`), unless the seller opted to pay it on its debits (`vatOnDebits`, frozen on the
invoice's issuer when it was issued): then it is `44571` or `44566` at issue. A legacy commission
invoice is paid by the store's funds when it is issued: its VAT is due at issue.

Collections, refunds and payouts post when the bank moves the money, not when they are asked for
(`cash`: in transit when a bank file takes them, `512` when a statement books them).

Third-party lines carry the organization's SIREN (auxiliary account) and the invoice they belong
to (`letter_group`: the sale or self-billed invoice, which its credit notes and payments share),
so that the database letters them once they sum to zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from backend.billing.accounting import entries, vat_due
from backend.billing.accounting.chart import Account, Journal
from backend.billing.accounting.entries import Entry, Line, Party, paris_day
from backend.billing.models import Invoice, InvoiceKind
from backend.billing.vat import reverse_charged_invoice, vat_amount_cents
from backend.db import database


class Event(StrEnum):
    SALE_INVOICE = "sale_invoice"
    CUSTOMER_CREDIT_NOTE = "customer_credit_note"
    COLLECTION = "collection"
    REFUND = "refund"
    RETURNED_DEBIT = "returned_debit"
    SELF_BILLED_INVOICE = "self_billed_invoice"
    SUPPLIER_CREDIT_NOTE = "supplier_credit_note"
    PAYOUT = "payout"
    DEBT_DEDUCTION = "debt_deduction"
    LEGACY_COLLECTION = "legacy_collection"
    COMMISSION_INVOICE = "commission_invoice"
    COMMISSION_SETTLEMENT = "commission_settlement"


@dataclass(frozen=True)
class Piece:
    """An invoice as the books see it: its id and number (None while not issued yet: filled in on
    validation), day, counterparty, amount excluding tax and VAT."""

    invoice_id: str
    number: str | None
    day: date
    party: Party
    excl_cents: int
    vat_cents: int
    reservation_id: str | None = None
    revenue: Account = Account.SERVICES_SOLD  # where a sale or customer credit note books its amount
    vat_at_issue: bool = True  # the VAT is due when the invoice is issued (the seller opted for debits)

    @property
    def incl_cents(self) -> int:
        return self.excl_cents + self.vat_cents


def piece_of(invoice: Invoice, *, vat_cents: int | None = None) -> Piece:
    """The invoice's piece; its counterparty is the organization side of it (the customer of a
    sale, the issuer of a self-billed invoice), as frozen on the invoice; its VAT the one the
    invoice shows (a credit note's: the cumulative difference, `backend.billing.vat`).
    `vat_cents`: the VAT when the caller computed it otherwise."""
    party = invoice.customer if invoice.customer_organization_id else invoice.issuer
    return Piece(invoice.id, invoice.number, paris_day(invoice.issued_at), party_of(party),
                 invoice.amount_excl_tax_cents,
                 vat_amount_cents(invoice.amount_excl_tax_cents, invoice.vat_rate_bps,
                                  credited_before_cents=invoice.credited_before_cents) if vat_cents is None
                 else vat_cents, invoice.reservation_id, revenue_account(invoice),
                 vat_at_issue=vat_at_issue(invoice))


def revenue_account(invoice: Invoice) -> Account:
    """The revenue account of a sale or customer credit note: a reverse-charged one (VAT category
    AE, `backend.billing.vat`) on its own sub-account, so its turnover is read apart from the
    sales that carry French VAT."""
    if reverse_charged_invoice(rate_bps=invoice.vat_rate_bps, seller=invoice.issuer, buyer=invoice.customer):
        return Account.SERVICES_SOLD_EU_REVERSE_CHARGE
    return Account.SERVICES_SOLD


def vat_at_issue(invoice: Invoice) -> bool:
    """Whether the invoice's VAT is due (or deductible) when it is issued: its seller opted to pay
    VAT on its debits (frozen on the issuer), or it is a legacy commission, paid when issued."""
    return (InvoiceKind(invoice.kind) is InvoiceKind.PLATFORM_COMMISSION
            or bool((invoice.issuer or {}).get("vatOnDebits")))


def _vat_line(piece: Piece, *, purchase: bool, group: str, debit: bool) -> Line:
    """The VAT line of an invoice or credit note `piece`: on the account of VAT due, or on the
    pending one in the invoice's lettering `group` until the money is paid (`vat_due`)."""
    if piece.vat_at_issue:
        account, letter_group = (Account.VAT_DEDUCTIBLE if purchase else Account.VAT_COLLECTED), None
    else:
        account, letter_group = (Account.VAT_DEDUCTIBLE_PENDING if purchase else Account.VAT_COLLECTED_PENDING), group
    side = "debit_cents" if debit else "credit_cents"
    return Line(account, **{side: piece.vat_cents}, letter_group=letter_group)


def party_of(snapshot: dict) -> Party:
    """The auxiliary account of an invoice party snapshot (`parties.organization_party`)."""
    return Party(snapshot.get("siren") or "", snapshot.get("legalName") or "")


def _entry(journal: Journal, event: Event, piece: Piece, label: str, lines: list[Line], *,
           payment_order_id: str | None = None, day: date | None = None, invoice_id: str | None = None,
           piece_ref: str | None = None) -> Entry:
    return Entry(journal=journal, event=event.value, day=day or piece.day, label=label, lines=tuple(lines),
                 piece_ref=piece_ref or piece.number, piece_date=piece.day if piece.number else None,
                 invoice_id=invoice_id or piece.invoice_id, payment_order_id=payment_order_id,
                 reservation_id=piece.reservation_id)


def _label(*parts: str | None) -> str:
    return " ".join(part for part in parts if part)


# Invoices ---------------------------------------------------------------------------------------

def sale_invoice_entry(piece: Piece, *, event: Event = Event.SALE_INVOICE) -> Entry:
    return _entry(Journal.SALES, event, piece, _label("Facture", piece.number, piece.party.name), [
        Line(Account.CUSTOMERS, debit_cents=piece.incl_cents, party=piece.party, letter_group=piece.invoice_id),
        Line(piece.revenue, credit_cents=piece.excl_cents),
        _vat_line(piece, purchase=False, group=piece.invoice_id, debit=False),
    ])


def customer_credit_note_entry(credit_note: Piece, *, credited_invoice_id: str) -> Entry:
    return _entry(Journal.SALES, Event.CUSTOMER_CREDIT_NOTE, credit_note, f"Avoir {credit_note.number}", [
        Line(credit_note.revenue, debit_cents=credit_note.excl_cents),
        _vat_line(credit_note, purchase=False, group=credited_invoice_id, debit=True),
        Line(Account.CUSTOMERS, credit_cents=credit_note.incl_cents, party=credit_note.party,
             letter_group=credited_invoice_id),
    ])


def self_billed_invoice_entry(piece: Piece) -> Entry:
    return _entry(Journal.PURCHASES, Event.SELF_BILLED_INVOICE, piece, f"Autofacture {piece.number}", [
        Line(Account.SERVICES_BOUGHT, debit_cents=piece.excl_cents),
        _vat_line(piece, purchase=True, group=piece.invoice_id, debit=True),
        Line(Account.SUPPLIERS, credit_cents=piece.incl_cents, party=piece.party, letter_group=piece.invoice_id),
    ])


def supplier_credit_note_entry(credit_note: Piece, *, credited_invoice_id: str) -> Entry:
    label = f"Avoir fournisseur {credit_note.number}"
    return _entry(Journal.PURCHASES, Event.SUPPLIER_CREDIT_NOTE, credit_note, label, [
        Line(Account.SUPPLIERS, debit_cents=credit_note.incl_cents, party=credit_note.party,
             letter_group=credited_invoice_id),
        Line(Account.SERVICES_BOUGHT, credit_cents=credit_note.excl_cents),
        _vat_line(credit_note, purchase=True, group=credited_invoice_id, debit=False),
    ])


# Payments (their stages at the bank: `cash`) ---------------------------------------------------

def returned_debit_entry(invoice: Piece, *, amount_cents: int, payment_order_id: str, day: date,
                         cash: Account = Account.BANK, from_transit: bool = False, vat: tuple[Line, ...] = ()) -> Entry:
    """A SEPA debit the bank returned: the customer owes again. Booked before, the money leaves
    `512` again (or `471`, for a return line that waited there), with the VAT its collection made
    due (`vat`). Still in transit (the bank returned it before a statement credited it), the
    receivable comes back out of `511`, and the return line's money waits in `471` for the credit
    it takes back (the line that brings that credit lands in `471` too: they cancel out)."""
    owed = Line(Account.CUSTOMERS, debit_cents=amount_cents, party=invoice.party, letter_group=invoice.invoice_id)
    if not from_transit:
        lines = [owed, Line(cash, credit_cents=amount_cents)]
    else:
        lines = [owed, Line(Account.RECEIPTS_IN_TRANSIT, credit_cents=amount_cents, letter_group=invoice.invoice_id)]
        if cash is not Account.SUSPENSE:  # a line matched from 471 waits there already
            lines += [Line(Account.SUSPENSE, debit_cents=amount_cents), Line(cash, credit_cents=amount_cents)]
    return _entry(Journal.BANK, Event.RETURNED_DEBIT, invoice, f"Prélèvement rejeté {invoice.number}",
                  [*lines, *vat], payment_order_id=payment_order_id, day=day)


def debt_deduction_entry(invoice: Piece, *, debt_invoice_id: str, amount_cents: int, payment_order_id: str,
                         day: date, vat: tuple[Line, ...] = ()) -> Entry:
    """The distributor's debt (a supplier credit note after its payout, on the self-billed invoice
    `debt_invoice_id`) deducted from the payout of `invoice`: one 401 line against the other, and
    the deductible VAT this compensation settles on each (`vat`)."""
    return _entry(Journal.OTHER, Event.DEBT_DEDUCTION, invoice, f"Compensation dette fournisseur {invoice.number}", [
        Line(Account.SUPPLIERS, debit_cents=amount_cents, party=invoice.party, letter_group=invoice.invoice_id),
        Line(Account.SUPPLIERS, credit_cents=amount_cents, party=invoice.party, letter_group=debt_invoice_id),
        *vat,
    ], payment_order_id=payment_order_id, day=day)


def post_debt_deduction(invoice: Piece, *, debt_invoice_id: str, amount_cents: int, payment_order_id: str,
                        day: date) -> None:
    """The deduction of `debt_invoice_id`'s debt from `invoice`'s payout: a payment by compensation,
    of `invoice` (its deductible VAT's share becomes deductible) and back from the distributor on
    the debt (the VAT its credit note took back leaves the deductible VAT), `vat_due`."""
    positions = vat_due.Positions([invoice.invoice_id, debt_invoice_id], purchase=True)
    vat = (*positions.paid(invoice.invoice_id, amount_cents), *positions.paid(debt_invoice_id, -amount_cents))
    entries.post(debt_deduction_entry(invoice, debt_invoice_id=debt_invoice_id, amount_cents=amount_cents,
                                      payment_order_id=payment_order_id, day=day, vat=vat))


# Legacy (`legacy_mandate`): the store sells; the platform books its commission and the funds it holds.

def commission_entries(commission: Piece) -> list[Entry]:
    """The legacy commission invoice (sold to the store) and its settlement out of the store's funds."""
    settlement = _entry(Journal.OTHER, Event.COMMISSION_SETTLEMENT, commission,
                        f"Commission {commission.number} imputée sur les fonds du magasin", [
                            Line(Account.STORE_FUNDS, debit_cents=commission.incl_cents, party=commission.party,
                                 letter_group=commission.reservation_id),
                            Line(Account.CUSTOMERS, credit_cents=commission.incl_cents, party=commission.party,
                                 letter_group=commission.invoice_id),
                        ])
    return [sale_invoice_entry(commission, event=Event.COMMISSION_INVOICE), settlement]


# Posting ---------------------------------------------------------------------------------------

def post_invoice(invoice: Invoice, *, credited: Invoice | None = None, vat_cents: int | None = None) -> None:
    """The entry of an issued invoice or credit note, by its kind (legacy store invoices are not
    the platform's: nothing; their collection is)."""
    piece = piece_of(invoice, vat_cents=vat_cents)
    kind = InvoiceKind(invoice.kind)
    if kind is InvoiceKind.PLATFORM_SALE:
        entries.post(sale_invoice_entry(piece))
    elif kind is InvoiceKind.PLATFORM_CREDIT_NOTE:
        entries.post(customer_credit_note_entry(piece, credited_invoice_id=invoice.credited_invoice_id))
    elif kind is InvoiceKind.SUPPLIER_SELF_BILLED:
        entries.post(self_billed_invoice_entry(piece))
    elif kind is InvoiceKind.SUPPLIER_CREDIT_NOTE:
        entries.post(supplier_credit_note_entry(piece, credited_invoice_id=invoice.credited_invoice_id))
    elif kind is InvoiceKind.PLATFORM_COMMISSION:
        entries.post(*commission_entries(piece))


def post_sale_issued(invoice: Invoice, *, day: date) -> None:
    """The sale `invoice` a collection issues, in the collection's statement and on its `day`; its
    piece (the invoice's number and date) is filled in on validation, as for any entry naming an
    invoice without its number. Its payment posts at the bank's stages (`cash`)."""
    piece = Piece(invoice.id, None, day, party_of(invoice.customer), invoice.amount_excl_tax_cents,
                  vat_amount_cents(invoice.amount_excl_tax_cents, invoice.vat_rate_bps), invoice.reservation_id,
                  revenue_account(invoice), vat_at_issue=vat_at_issue(invoice))
    entries.post(sale_invoice_entry(piece))


def balance(account: Account, siren: str | None = None) -> int:
    """Debits minus credits of an account (of one auxiliary account when `siren` is given)."""
    sql = "SELECT coalesce(sum(debit_cents - credit_cents), 0) FROM accounting_line WHERE account = %s"
    params: tuple = (Account(account).value,)
    if siren is not None:
        sql, params = sql + " AND aux_account = %s", (*params, siren)
    return int(database.execute_sql(sql, params).fetchone()[0])
