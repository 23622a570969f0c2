"""What billing shows: the reservation's financial summary, the invoice list, one invoice's PDF.

Authorization is written into the queries: an admin (`billing.manage.all`) sees everything; an
organization sees the reservations it is the industrial or the distributor of, and the invoices
it issued or received (its active organization, API.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from peewee import fn

from backend.billing.documents.stored_pdf import STORAGE_CONTEXT
from backend.billing.errors import BillingPdfNotReady
from backend.billing.invoices import amounts, incl_tax_cents
from backend.billing.models import (
    FinancialRecord,
    FinancialStatus,
    Invoice,
    InvoiceKind,
    PaymentKind,
    PaymentOrder,
    PaymentStatus,
)
from backend.clock import iso
from backend.errors import Forbidden, NotFound
from backend.identity.permissions import BILLING_MANAGE_ALL
from backend.identity.principal import Principal
from backend.marketplace.models import Reservation
from backend.marketplace.pricing import resolve_billing_model

LIST_DEFAULT, LIST_MAX = 50, 200


def sees_all(principal: Principal) -> bool:
    return principal.has_permission(BILLING_MANAGE_ALL)


def invoice_item(invoice: Invoice, credited_number: str | None = None) -> dict:
    """The Invoice fields of spec C (never the storage key), with the parties' names."""
    return {
        "invoiceNumber": invoice.number,
        "kind": invoice.kind,
        "status": invoice.status,
        **amounts(invoice),
        "currency": invoice.currency,
        "issuedAt": iso(invoice.issued_at),
        "dueAt": iso(invoice.due_at),
        "hasPdf": invoice.has_pdf,
        "reservationId": invoice.reservation_id,
        "creditedInvoiceNumber": credited_number,
        "issuer": {"organizationId": invoice.issuer_organization_id, "legalName": invoice.issuer["legalName"]},
        "customer": {"organizationId": invoice.customer_organization_id, "legalName": invoice.customer["legalName"]},
    }


def _items(invoices: list[Invoice]) -> list[dict]:
    credited_ids = {i.credited_invoice_id for i in invoices if i.credited_invoice_id}
    numbers = dict(Invoice.select(Invoice.id, Invoice.number).where(Invoice.id.in_(list(credited_ids))).tuples()) \
        if credited_ids else {}
    return [invoice_item(i, numbers.get(i.credited_invoice_id)) for i in invoices]


def parse_kinds(values: Iterable[str]) -> list[InvoiceKind]:
    """Requested kinds: unknown values ignored, none (or none known) means all."""
    known = {k.value for k in InvoiceKind}
    return sorted({InvoiceKind(v) for v in values if v in known})


def list_invoices(*, principal: Principal, kinds: list[InvoiceKind], limit: int = LIST_DEFAULT) -> list[dict]:
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


def pdf_chunks(storage, invoice: Invoice) -> Iterator[bytes]:
    return storage.open(STORAGE_CONTEXT, invoice.pdf_storage_key)


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


def reservation_summary(*, principal: Principal, reservation_id: str) -> dict:
    admin = sees_all(principal)
    reservation = visible_reservation(principal, reservation_id)
    record = FinancialRecord.get_or_none(FinancialRecord.reservation_id == reservation.id)
    source = record or reservation
    base = record.store_base_cents if record else reservation.base_amount_cents
    commission = record.commission_cents if record else reservation.commission_amount_cents
    shows_mandate = admin or principal.active_organization_id == reservation.industrial_organization_id
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
    return {
        "reservationId": reservation.id,
        "billingModel": (record.billing_model if record else resolve_billing_model(reservation.billing_model).value),
        "financialStatus": record.financial_status if record else FinancialStatus.DRAFT.value,
        "amounts": {
            "storeBaseAmountCents": base,
            "platformCommissionAmountCents": commission,
            "industrialTotalAmountCents": base + commission,
            "commissionRateBps": source.commission_rate_bps,
        },
        "paymentOrders": [{
            "id": o.id, "kind": o.kind, "method": o.method, "status": o.status, "amountCents": o.amount_cents,
            "currency": o.currency, "mandateRef": o.mandate_ref if shows_mandate else None,
            "createdAt": iso(o.created_at), "paidAt": iso(o.paid_at),
        } for o in orders],
        "invoices": _items(invoices),
        "refundedCents": record.refunded_excl_tax_cents if record else 0,
        "customerCreditCents": _customer_credit_cents(sale[0]) if sale else 0,
    }


def _customer_credit_cents(sale: Invoice) -> int:
    """What the customer is owed, including VAT: the sale's credit notes less the refunds paid on
    them (a refund returns its credit note's total; a credit note of the rest moves no money until
    its credit is repaid)."""
    notes = list(Invoice.select().where(Invoice.credited_invoice == sale.id))
    repaid = (PaymentOrder.select(fn.COALESCE(fn.SUM(PaymentOrder.amount_cents), 0))
              .where(PaymentOrder.invoice.in_([note.id for note in notes]), PaymentOrder.kind == PaymentKind.REFUND,
                     PaymentOrder.status == PaymentStatus.PAID).scalar()) if notes else 0
    return sum(incl_tax_cents(note) for note in notes) - int(repaid)
