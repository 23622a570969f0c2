"""Billing demo data of `vitrine seed-demo`: the demo industrial's approved reservations are
collected (the key of auto-collection, so the worker's own run replays it), and the first sale is
partly refunded, so the demo shows invoices, ledger entries, a credit note and a refund.
Idempotent: collected reservations and refunded invoices are left as they are."""

from __future__ import annotations

from backend.billing import collection, corrections
from backend.billing.models import FinancialRecord, Invoice, InvoiceKind, PaymentMethod
from backend.config import Config
from backend.marketplace.demo import INDUSTRIAL
from backend.marketplace.models import Reservation
from backend.marketplace.pricing import BillingModel

REFUND_REASON = "Démo : geste commercial (emplacement installé avec deux jours de retard)"


def seed_demo_billing(*, config: Config) -> str:
    collected = 0
    due = (Reservation.select()
           .where(Reservation.industrial_organization_id == INDUSTRIAL, Reservation.status.in_(collection.COLLECTABLE),
                  Reservation.billing_model == BillingModel.PRINCIPAL_SELLER.value,
                  Reservation.id.not_in(FinancialRecord.select(FinancialRecord.reservation_id).where(
                      FinancialRecord.financial_status != "reservation_total_due")))
           .order_by(Reservation.created_at, Reservation.id))
    for reservation in due:
        collection.collect(reservation_id=reservation.id, industrial_organization_id=INDUSTRIAL,
                           method=PaymentMethod.BANK_TRANSFER, key=collection.auto_collect_key(reservation.id),
                           user_id=None, config=config)
        collected += 1
    sale = (Invoice.select().where(Invoice.customer_organization_id == INDUSTRIAL,
                                   Invoice.kind == InvoiceKind.PLATFORM_SALE)
            .order_by(Invoice.issued_at, Invoice.sequence).first())
    refunded = 0
    if sale is not None and not Invoice.select().where(Invoice.credited_invoice == sale.id).exists():
        corrections.refund_once(scope="demo", key=f"demo-refund-{sale.number}", invoice_number=sale.number,
                                amount_cents=max(1, sale.amount_excl_tax_cents // 10), reason=REFUND_REASON,
                                method=PaymentMethod.BANK_TRANSFER, user_id=None, config=config)
        refunded = 1
    invoices = Invoice.select().where(Invoice.customer_organization_id == INDUSTRIAL).count()
    return f"{collected} reservations collected, {refunded} refund, {invoices} invoices of the demo industrial"
