"""The store's share follows the sale (API.md "Money that always balances", "Settlement follows
the sale"). "Settlement" names the bank's view of a payment order (`bank.settlement`); here the
word is the store's share, what the distributor is paid out (`payouts`).

What the distributor is owed for a reservation is the store share of what is left of the sale,
excluding tax, after its refunds and credit notes: the store base less the store share of what
was credited, that share being the largest remainder between store base and commission on the
cumulative credited amount.

- Self-billing bills that share (`store_share_left`); a sale refunded or credited in full has none
  and is never self-billed.
- When the sale is credited further (a refund, a credit note) after self-billing, the live
  self-billed invoice gets a `supplier_credit_note` of the store share of that amount
  (`billing.supplier.self_billing.adjusted`). Paid out already, that amount is the distributor's
  debt (`billing_supplier_debt`), kept back from its next payouts (`take_debt`).
- A self-billed invoice credited in full (through the credit-note route, or by the sale's own
  credits) voids its self-billing: the reservation goes back to its sale's status and, when
  something is left of the sale, is self-billed again (a new invoice, the next number).

Everything here runs inside the caller's transaction, under the reservation's financial record
lock (the caller holds it).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from backend import clock
from backend.billing import records
from backend.billing.accounting import ledger
from backend.billing.accounting.chart import Account
from backend.billing.invoicing.invoices import (
    credit_notes_incl_tax_cents,
    credited_cents,
    incl_tax_cents,
    issue_credit_note,
)
from backend.billing.models import (
    FinancialRecord,
    FinancialStatus,
    Invoice,
    InvoiceKind,
    InvoiceStatus,
    PaymentKind,
    PaymentOrder,
    PaymentStatus,
    Settlement,
    SupplierDebt,
)
from backend.config import Config
from backend.db import database
from backend.logs import log_event
from backend.money import round_half_up_div, split_largest_remainder

SELF_BILLED = frozenset({FinancialStatus.SUPPLIER_SETTLEMENT_PENDING, FinancialStatus.SUPPLIER_SETTLEMENT_PAID})
ADJUSTED_SCOPE = "billing.supplier.self_billing.adjusted"


def store_share_credited(record: FinancialRecord, credited: int) -> int:
    """The store's share of `credited` cents of the sale (largest remainder, cumulative)."""
    weights = [record.store_base_cents, record.commission_cents]
    if credited == 0 or sum(weights) == 0:
        return 0
    return split_largest_remainder(credited, weights)[0]


def store_share_left(record: FinancialRecord, sale_credited: int) -> int:
    """What self-billing bills: the store base less the store share of what the sale's credit
    notes credit."""
    return record.store_base_cents - store_share_credited(record, sale_credited)


def sale_of(reservation_id: str) -> Invoice | None:
    return Invoice.get_or_none(Invoice.reservation_id == reservation_id, Invoice.kind == InvoiceKind.PLATFORM_SALE)


def customer_paid(reservation_id: str) -> bool:
    """Whether the money of the sale is received: a bank statement settled the customer's payment
    of it (`settlement` `settled`; a returned debit is not, until a new collection is settled)."""
    return (PaymentOrder.select().where(PaymentOrder.reservation_id == reservation_id,
                                        PaymentOrder.kind == PaymentKind.RESERVATION_TOTAL,
                                        PaymentOrder.status == PaymentStatus.PAID,
                                        PaymentOrder.settlement == Settlement.SETTLED).exists())


def live_self_billed(reservation_id: str) -> Invoice | None:
    """The reservation's self-billed invoice not credited in full (at most one, unique index)."""
    return Invoice.get_or_none(Invoice.reservation_id == reservation_id,
                               Invoice.kind == InvoiceKind.SUPPLIER_SELF_BILLED,
                               Invoice.status != InvoiceStatus.CREDITED)


def sale_status(sale: Invoice, credited: int, whole: FinancialStatus) -> FinancialStatus:
    """The financial status a sale credited `credited` cents gives an unsettled reservation;
    `whole` when nothing is left (`fully_refunded` by refunds, `cancelled` by a credit note)."""
    if credited == 0:
        return FinancialStatus.RESERVATION_TOTAL_PAID
    return whole if credited >= sale.amount_excl_tax_cents else FinancialStatus.PARTIALLY_REFUNDED


def follow_sale(record: FinancialRecord, sale: Invoice, *, before: int, amount: int, whole: FinancialStatus,
                reason: str, user_id: str | None, config: Config) -> None:
    """After `amount` more cents of the sale are credited (`before` were): the live self-billed
    invoice credited the store share of them, else the sale's status; the record saved."""
    settled = live_self_billed(sale.reservation_id)
    if settled is not None:
        share = store_share_credited(record, before + amount) - store_share_credited(record, before)
        if share:
            credit_self_billed(settled, share, record, reason=reason, user_id=user_id, config=config,
                               label="Régularisation", back_to=sale_status(sale, before + amount, whole))
        if live_self_billed(sale.reservation_id) is not None:
            records.move(record, FinancialStatus(record.financial_status))  # settled: the status stays
            return
        if FinancialStatus(record.financial_status) not in SELF_BILLED:
            return  # the settlement was voided: the record is back at the sale's status
    records.move(record, sale_status(sale, before + amount, whole))


def credit_self_billed(invoice: Invoice, amount: int, record: FinancialRecord, *, reason: str, user_id: str | None,
                       config: Config, label: str, back_to: FinancialStatus | None = None) -> Invoice:
    """A `supplier_credit_note` of `amount` of the live self-billed `invoice` (locked by the
    caller): the journal, the distributor's debt when the invoice was paid out, and, when it is
    credited in full, the settlement voided (the record back to `back_to`, or to the sale's
    status)."""
    distributor = invoice.issuer_organization_id
    note = issue_credit_note(invoice, amount, label=label, reason=reason, user_id=user_id, config=config)
    ledger.post_invoice(note)  # AC: 401 debited; paid out already, the debit left there is the debt
    paid_out = record.financial_status == FinancialStatus.SUPPLIER_SETTLEMENT_PAID
    if paid_out:
        SupplierDebt.create(organization_id=distributor, kind="debt", amount_excl_tax_cents=amount,
                            amount_cents=incl_tax_cents(note), reservation_id=invoice.reservation_id,
                            invoice_id=note.id)
    log_event(ADJUSTED_SCOPE, "self-billed invoice credited", "info", reservationId=invoice.reservation_id,
              invoiceNumber=invoice.number, creditNoteNumber=note.number, amountCents=amount, paidOut=paid_out)
    if credited_cents(invoice.id) >= invoice.amount_excl_tax_cents:
        now = clock.now()
        Invoice.update(status=InvoiceStatus.CREDITED, updated_at=now).where(Invoice.id == invoice.id).execute()
        invoice.status = InvoiceStatus.CREDITED
        if back_to is None:
            sale = sale_of(invoice.reservation_id)
            back_to = sale_status(sale, credited_cents(sale.id), FinancialStatus.CANCELLED)
        records.move(record, back_to)
    return note


def due_of(invoice: Invoice) -> tuple[int, int]:
    """What is left to pay on a self-billed invoice: `(excluding tax, including VAT)`."""
    return (invoice.amount_excl_tax_cents - credited_cents(invoice.id),
            incl_tax_cents(invoice) - credit_notes_incl_tax_cents(invoice.id))


@dataclass(frozen=True)
class Debt:
    excl_tax_cents: int
    cents: int  # including VAT


def outstanding_debt(distributor: str) -> Debt:
    """What the distributor still owes back (debts less deductions)."""
    cursor = database.execute_sql(
        "SELECT coalesce(sum(CASE kind WHEN 'debt' THEN amount_excl_tax_cents ELSE -amount_excl_tax_cents END), 0),"
        " coalesce(sum(CASE kind WHEN 'debt' THEN amount_cents ELSE -amount_cents END), 0)"
        " FROM billing_supplier_debt WHERE organization_id = %s", (distributor,))
    excl, incl = cursor.fetchone()
    return Debt(int(excl), int(incl))


def take_debt(distributor: str, due: Debt) -> Debt:
    """What a payout of `due` keeps back of the distributor's debt (at most `due`), the
    distributor's debts locked until the caller's commit."""
    database.execute_sql("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                         (f"billing_supplier_debt:{distributor}",))
    debt = outstanding_debt(distributor)
    if debt.cents <= due.cents and debt.excl_tax_cents <= due.excl_tax_cents:
        return debt
    cents = min(debt.cents, due.cents)
    excl = min(due.excl_tax_cents, debt.excl_tax_cents,
               round_half_up_div(debt.excl_tax_cents * cents, debt.cents) if debt.cents else 0)
    return Debt(excl, cents)


def record_deduction(distributor: str, taken: Debt, *, invoice: Invoice, payment_order_id: str | None,
                     day: date) -> None:
    """The deduction `take_debt` gave, written against the self-billed invoice it was kept from,
    and booked (OD) against the self-billed invoices whose 401 lines carry the debt, oldest first."""
    if taken.cents == 0 and taken.excl_tax_cents == 0:
        return
    SupplierDebt.create(organization_id=distributor, kind="deduction", amount_excl_tax_cents=taken.excl_tax_cents,
                        amount_cents=taken.cents, reservation_id=invoice.reservation_id, invoice_id=invoice.id,
                        payment_order_id=payment_order_id)
    piece, left = ledger.piece_of(invoice), taken.cents
    for debt_invoice_id, owed in _debts_in_books(piece.party.siren):
        cents = min(owed, left)
        ledger.post_debt_deduction(piece, debt_invoice_id=debt_invoice_id, amount_cents=cents,
                                   payment_order_id=payment_order_id, day=day)
        left -= cents
        if left == 0:
            return
    raise RuntimeError(f"the books carry less debt of {distributor} than the {taken.cents} cents kept back")


def _debts_in_books(siren: str) -> list[tuple[str, int]]:
    """The distributor's 401 lines left in debit, per self-billed invoice (its letter group),
    oldest first: supplier credit notes issued after their invoice was paid out."""
    cursor = database.execute_sql(
        "SELECT letter_group, sum(debit_cents - credit_cents) FROM accounting_line"
        " WHERE account = %s AND aux_account = %s AND letter_group IS NOT NULL"
        " GROUP BY letter_group HAVING sum(debit_cents - credit_cents) > 0 ORDER BY min(id)",
        (Account.SUPPLIERS.value, siren))
    return [(group, int(owed)) for group, owed in cursor.fetchall()]
