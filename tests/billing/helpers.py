"""Billing test data: approved reservations between KYB-approved organizations with billing
profiles, made through the marketplace services (plain functions, called inside a test)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from backend import clock
from backend.billing.accounting.entries import paris_day
from backend.billing.bank import settlement
from backend.billing.models import PaymentKind, PaymentOrder, PaymentStatus, Settlement
from backend.config import Config
from backend.db import transaction
from backend.identity import bank_details
from backend.identity.models import Organization
from backend.marketplace import campaigns, cart, catalog, furniture, reservations, store_zones
from backend.marketplace.furniture import ZoneSpec
from backend.marketplace.models import Reservation
from backend.marketplace.reservations import Review
from tests.factories import add_billing_profile, make_organization

RATE_BPS = 2000
START = datetime(2026, 12, 1, tzinfo=UTC)


def booted_config() -> Config:
    """The test process's configuration: what the composition roots (api, actors) pass billing."""
    from backend.runtime import current_runtime

    return current_runtime().config


def approved_org(actor_type: str, *, iban: str | None = "FR7630006000011234567890189") -> Organization:
    """KYB approved with its billing profile: its account is the approved one (as a review does)."""
    organization = make_organization(actor_type, kyb_status="approved")
    add_billing_profile(organization, iban=iban)
    bank_details.record_approved(organization.id)
    return organization


def customer_paid(reservation_id: str) -> None:
    """The bank booked the customer's payment of the sale (what the statement line settling it
    does; tests of the statements themselves import one): the payout may go."""
    with transaction():
        for order in PaymentOrder.select().where(
                PaymentOrder.reservation_id == reservation_id, PaymentOrder.kind == PaymentKind.RESERVATION_TOTAL,
                PaymentOrder.status == PaymentStatus.PAID,
                PaymentOrder.settlement.in_([Settlement.UNSENT, Settlement.IN_FILE])):
            settlement.settle(order.id, booked_on=paris_day(clock.now()))


class Market:
    """One placement universe and furniture type, and a factory of reservations on new ad spaces."""

    def __init__(self) -> None:
        tag = uuid.uuid4().hex[:8]
        self.universe = store_zones.create_universe(label=f"Univers {tag}")
        zone = ZoneSpec(code="front", label="Fronton", face_quantity=1, printable=True, width_mm=1000, height_mm=300)
        self.furniture = furniture.create_furniture_type(name=f"Gondole {tag}", zones=[zone])

    def reservation(self, industrial: Organization, distributor: Organization, *, price_cents: int = 100_000,
                    approve: bool = True, rate_bps: int = RATE_BPS, day: int = 0,
                    cart_seen: list | None = None) -> Reservation:
        """A reservation checked out (and approved); `cart_seen` receives the cart shown before checkout."""
        store = catalog.create_store(organization_id=distributor.id, name="Supermarché du Lac", street="1 rue Neuve",
                                     postal_code="74000", city="Annecy", country="FR")
        space = catalog.publish_ad_space(
            organization_id=distributor.id, store_id=store.id, name="Tête de gondole",
            promo_furniture_type_id=self.furniture.furniture_type_id, placement_universe_id=self.universe.id,
            placement_rayon_id=None, price_cents=price_cents,
        )
        starts = START + timedelta(days=day)
        campaign = campaigns.create_campaign(organization_id=industrial.id, name="Hiver", starts_at=starts,
                                             ends_at=starts + timedelta(days=14))
        cart.add_cart_item(organization_id=industrial.id, campaign_id=campaign.id, ad_space_id=space.id, user_id=None,
                           rate_bps=rate_bps)
        if cart_seen is not None:
            cart_seen.append(cart.current_cart(organization_id=industrial.id, rate_bps=rate_bps))
        (reservation,) = cart.checkout(organization_id=industrial.id, user_id=None, rate_bps=rate_bps)
        if approve:
            reservations.review_reservation(reservation_id=reservation.id, distributor_organization_id=distributor.id,
                                            decision=Review.APPROVED)
        return Reservation.get_by_id(reservation.id)
