"""What billing shows: the reservation's financial summary, the invoice list, one invoice's PDF.

Authorization is written into the queries: an admin (`billing.manage.all`) sees everything; an
organization sees the reservations it is the industrial or the distributor of, and the invoices
it issued or received (its active organization, API.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from peewee import fn

from backend.billing.errors import BillingPdfNotReady
from backend.billing.invoicing.invoices import Amounts, amounts, incl_tax_cents
from backend.billing.models import (
    FinancialRecord,
    FinancialStatus,
    Invoice,
    InvoiceKind,
    PaymentKind,
    PaymentOrder,
    PaymentStatus,
)
from backend.errors import Forbidden, NotFound
from backend.identity.permissions import BILLING_MANAGE_ALL
from backend.identity.principal import Principal
from backend.marketplace.models import Reservation
from backend.marketplace.pricing import resolve_billing_model

LIST_DEFAULT, LIST_MAX = 50, 200


def sees_all(principal: Principal) -> bool:
    return principal.has_permission(BILLING_MANAGE_ALL)


@dataclass(frozen=True)
class PartyName:
    organization_id: str | None  # None: the platform
    legal_name: str


@dataclass(frozen=True)
class InvoiceItem:
    """An invoice as the lists and the summary show it (spec C's fields, never the storage key)."""

    invoice: Invoice
    amounts: Amounts
    credited_invoice_number: str | None
    issuer: PartyName
    customer: PartyName


@dataclass(frozen=True)
class PaymentOrderItem:
    order: PaymentOrder
    mandate_ref: str | None  # shown to the industrial and admins only


@dataclass(frozen=True)
class SummaryAmounts:
    store_base_amount_cents: int
    platform_commission_amount_cents: int
    industrial_total_amount_cents: int
    commission_rate_bps: int


@dataclass(frozen=True)
class ReservationSummary:
    reservation_id: str
    billing_model: str
    financial_status: str
    amounts: SummaryAmounts
    payment_orders: list[PaymentOrderItem]
    invoices: list[InvoiceItem]
    refunded_cents: int
    customer_credit_cents: int  # including VAT: credit notes that moved no money, not yet repaid


def invoice_item(invoice: Invoice, credited_number: str | None = None) -> InvoiceItem:
    """The invoice with its amounts and the parties' names (as snapshotted when it was issued)."""
    return InvoiceItem(invoice, amounts(invoice), credited_number,
                       PartyName(invoice.issuer_organization_id, invoice.issuer["legalName"]),
                       PartyName(invoice.customer_organization_id, invoice.customer["legalName"]))


def _items(invoices: list[Invoice]) -> list[InvoiceItem]:
    credited_ids = {i.credited_invoice_id for i in invoices if i.credited_invoice_id}
    numbers = dict(Invoice.select(Invoice.id, Invoice.number).where(Invoice.id.in_(list(credited_ids))).tuples()) \
        if credited_ids else {}
    return [invoice_item(i, numbers.get(i.credited_invoice_id)) for i in invoices]


def parse_kinds(values: Iterable[str]) -> list[InvoiceKind]:
    """Requested kinds: unknown values ignored, none (or none known) means all."""
    known = {k.value for k in InvoiceKind}
    return sorted({InvoiceKind(v) for v in values if v in known})


def list_invoices(*, principal: Principal, kinds: list[InvoiceKind],
                  limit: int = LIST_DEFAULT) -> list[InvoiceItem]:
    query = Invoice.select()
    if not sees_all(principal):
        organization_id = principal.active_organization_id
        if organization_id is None:
            return []
        query = query.where((Invoice.issuer_organization_id == organization_id)
                            | (Invoice.customer_organization_id == organization_id))
    if kinds:
        query = query.where(Invoice.kind.in_([k.value for k in kinds]))
    limit = max(1, min(limit, LIST_MAX))
    return _items(list(query.order_by(Invoice.issued_at.desc(), Invoice.sequence.desc(), Invoice.id.desc())
                       .limit(limit)))


def downloadable_invoice(*, principal: Principal, invoice_number: str) -> Invoice:
    """The invoice whose PDF the caller may download: 404 unknown, 403 unrelated organization,
    404 `BILLING_PDF_NOT_READY` while no PDF is stored."""
    invoice = Invoice.get_or_none(Invoice.number == invoice_number)
    if invoice is None:
        raise NotFound("invoice not found")
    organization_id = principal.active_organization_id
    related = organization_id is not None and organization_id in (invoice.issuer_organization_id,
                                                                  invoice.customer_organization_id)
    if not (sees_all(principal) or related):
        raise Forbidden("the invoice belongs to another organization", reason="not_a_party")
    if not invoice.pdf_storage_key:
        raise BillingPdfNotReady("the invoice PDF is not ready yet", invoiceNumber=invoice.number)
    return invoice


def visible_reservation(principal: Principal, reservation_id: str) -> Reservation:
    """The reservation, for an admin or its industrial or distributor organization (404 else)."""
    query = Reservation.select().where(Reservation.id == reservation_id)
    if not sees_all(principal):
        organization_id = principal.active_organization_id
        query = query.where((Reservation.industrial_organization_id == organization_id)
                            | (Reservation.distributor_organization_id == organization_id))
    reservation = query.first()
    if reservation is None:
        raise NotFound("reservation not found")
    return reservation


def reservation_summary(*, principal: Principal, reservation_id: str) -> ReservationSummary:
    admin = sees_all(principal)
    reservation = visible_reservation(principal, reservation_id)
    record = FinancialRecord.get_or_none(FinancialRecord.reservation_id == reservation.id)
    source = record or reservation
    base = record.store_base_cents if record else reservation.base_amount_cents
    commission = record.commission_cents if record else reservation.commission_amount_cents
    customer_side = admin or principal.active_organization_id == reservation.industrial_organization_id
    orders = (PaymentOrder.select().where(PaymentOrder.reservation_id == reservation.id)
              .order_by(PaymentOrder.created_at, PaymentOrder.id))
    invoices = Invoice.select().where(Invoice.reservation_id == reservation.id)
    sale = [i for i in invoices if i.kind == InvoiceKind.PLATFORM_SALE]
    if not admin:  # each party sees what its organization issued or received (API.md)
        organization_id = principal.active_organization_id
        orders = orders.where(PaymentOrder.organization_id == organization_id)
        invoices = invoices.where((Invoice.issuer_organization_id == organization_id)
                                  | (Invoice.customer_organization_id == organization_id))
    invoices = list(invoices.order_by(Invoice.issued_at, Invoice.sequence))
    return ReservationSummary(
        reservation_id=reservation.id,
        billing_model=record.billing_model if record else resolve_billing_model(reservation.billing_model).value,
        financial_status=record.financial_status if record else FinancialStatus.DRAFT.value,
        amounts=SummaryAmounts(base, commission, base + commission, source.commission_rate_bps),
        payment_orders=[PaymentOrderItem(o, o.mandate_ref if customer_side else None) for o in orders],
        invoices=_items(invoices),
        refunded_cents=record.refunded_excl_tax_cents if record else 0,
        # the industrial's credit is the industrial's (and the admin's) to see, not the distributor's
        customer_credit_cents=_customer_credit_cents(sale[0]) if sale and customer_side else 0,
    )


def _customer_credit_cents(sale: Invoice) -> int:
    """What the customer is owed, including VAT: the sale's credit notes less the refunds paid on
    them (a refund returns its credit note's total; a credit note of the rest moves no money until
    its credit is repaid)."""
    notes = list(Invoice.select().where(Invoice.credited_invoice == sale.id))
    repaid = (PaymentOrder.select(fn.COALESCE(fn.SUM(PaymentOrder.amount_cents), 0))
              .where(PaymentOrder.invoice.in_([note.id for note in notes]), PaymentOrder.kind == PaymentKind.REFUND,
                     PaymentOrder.status == PaymentStatus.PAID).scalar()) if notes else 0
    return sum(incl_tax_cents(note) for note in notes) - int(repaid)
