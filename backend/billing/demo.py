"""Billing demo data of `vitrine seed-demo`: the demo industrial's approved reservations are
collected (the key and method of auto-collection, so the worker's own run replays it: by direct
debit once the demo's SEPA mandate is recorded, `seed_demo_sepa_mandate`), one of them a
reservation that ended in October 2026 (due for self-billing), and the first sale is partly
refunded, so the demo shows invoices, ledger entries, a credit note and a refund.
Idempotent: collected reservations and refunded invoices are left as they are."""

from __future__ import annotations

from datetime import UTC, datetime

from backend import clock
from backend.billing import corrections
from backend.billing.collection import collect
from backend.billing.models import FinancialRecord, Invoice, InvoiceKind, PaymentMethod, SepaMandate
from backend.billing.reservations import COLLECTABLE
from backend.config import Config
from backend.marketplace import campaigns, cart, reservations
from backend.marketplace.demo import DISTRIBUTOR, INDUSTRIAL
from backend.marketplace.models import AdSpace, Campaign, Reservation, Store
from backend.marketplace.pricing import BillingModel
from backend.marketplace.reservations import Review

REFUND_REASON = "Démo : geste commercial (emplacement installé avec deux jours de retard)"


def seed_demo_billing(*, config: Config) -> str:
    _seed_ended_reservation(config)
    collected = 0
    due = (Reservation.select()
           .where(Reservation.industrial_organization_id == INDUSTRIAL, Reservation.status.in_(COLLECTABLE),
                  Reservation.billing_model == BillingModel.PRINCIPAL_SELLER.value,
                  Reservation.id.not_in(FinancialRecord.select(FinancialRecord.reservation_id).where(
                      FinancialRecord.financial_status != "reservation_total_due")))
           .order_by(Reservation.created_at, Reservation.id))
    for reservation in due:
        collect.collect(reservation_id=reservation.id, industrial_organization_id=INDUSTRIAL,
                           method=None, key=collect.auto_collect_key(reservation.id),
                           user_id=None, config=config)
        collected += 1
    sale = (Invoice.select().where(Invoice.customer_organization_id == INDUSTRIAL,
                                   Invoice.kind == InvoiceKind.PLATFORM_SALE)
            .order_by(Invoice.issued_at, Invoice.sequence).first())
    refunded = 0
    if sale is not None and not Invoice.select().where(Invoice.credited_invoice == sale.id).exists():
        corrections.refund_once(key=f"demo-refund-{sale.number}", invoice_number=sale.number,
                                amount_cents=max(1, sale.amount_excl_tax_cents // 10), reason=REFUND_REASON,
                                method=PaymentMethod.BANK_TRANSFER, user_id=None, config=config)
        refunded = 1
    invoices = Invoice.select().where(Invoice.customer_organization_id == INDUSTRIAL).count()
    return f"{collected} reservations collected, {refunded} refund, {invoices} invoices of the demo industrial"


DEMO_MANDATE_REF = "VIT-DEMO0001"
DEMO_DEBTOR_IBAN = "FR7630001007941234567890185"


def seed_demo_sepa_mandate() -> str:
    """The demo industrial's active SEPA direct-debit mandate (docs/bank.md), recorded directly as
    `seed-demo` runs without the e-signature provider (no envelope: its reference is its own), so the
    reservations it books in `vitrine dev` are collected by direct debit and go in the bank's files
    (seeded before the billing demo, whose collections are debits too). Idempotent."""
    if SepaMandate.select().where(SepaMandate.organization_id == INDUSTRIAL).exists():
        return "the demo industrial already has a SEPA mandate"
    SepaMandate.create(organization_id=INDUSTRIAL, mandate_ref=DEMO_MANDATE_REF, iban=DEMO_DEBTOR_IBAN,
                       signed_at=clock.now())
    return f"SEPA mandate {DEMO_MANDATE_REF} of the demo industrial recorded"


ENDED_CAMPAIGN = "Automne des fromages"


def _seed_ended_reservation(config: Config) -> None:
    """An approved reservation of the demo distributor that ended in October 2026 (its incident
    window long closed): collected below, it is what a self-billing pass of `vitrine dev` issues a
    `supplier_self_billed` invoice for once the distributor's mandate is signed. Idempotent: the
    campaign is made once."""
    if Campaign.select().where(Campaign.organization_id == INDUSTRIAL, Campaign.name == ENDED_CAMPAIGN).exists():
        return
    space = (AdSpace.select().join(Store).where(Store.organization_id == DISTRIBUTOR)
             .order_by(AdSpace.created_at, AdSpace.id).get())
    campaign = campaigns.create_campaign(
        organization_id=INDUSTRIAL, name=ENDED_CAMPAIGN, starts_at=datetime(2026, 10, 5, tzinfo=UTC),
        ends_at=datetime(2026, 10, 25, tzinfo=UTC), universe_ids=[space.placement_universe_id], rayon_ids=[])
    rate_bps = config.platform_commission_rate_bps
    cart.add_cart_item(organization_id=INDUSTRIAL, campaign_id=campaign.id, ad_space_id=space.id, user_id=None,
                       rate_bps=rate_bps)
    (reservation,) = cart.checkout(organization_id=INDUSTRIAL, user_id=None, rate_bps=rate_bps)
    reservations.review_reservation(reservation_id=reservation.id, distributor_organization_id=DISTRIBUTOR,
                                    decision=Review.APPROVED)
