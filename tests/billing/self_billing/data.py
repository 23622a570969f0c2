"""Self-billing test data: collected reservations, signed self-billing mandates (rows written
directly: the mandate's e-signature flow has its own tests), parties signing in at the clock's now.

Market reservations run 1 to 15 December 2026 (a Tuesday): their incident window closes on
Friday 18 December 2026 at 23:59:59 in Paris (22:59:59 UTC); self-billing is due from then on."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from backend import clock
from backend.billing.collection import collect
from backend.billing.models import PaymentMethod, SelfBillingMandate, SelfBillingMandateStatus
from backend.identity.models import Organization
from backend.marketplace.models import Reservation
from tests.billing.helpers import Market, approved_org, booted_config
from tests.factories import add_member, make_admin, make_user, signed_in

DURING = datetime(2026, 12, 10, 9, 0, tzinfo=UTC)
LAST_SECOND = datetime(2026, 12, 18, 22, 59, 59, tzinfo=UTC)
AFTER = datetime(2026, 12, 21, 9, 0, tzinfo=UTC)


class Party:
    """A member of a new KYB-approved organization; `headers` signs in at the clock's now (a
    session opened before `clock.frozen_at` moves weeks ahead would have expired)."""

    def __init__(self, actor_type: str, role: str = "manager") -> None:
        self.organization = approved_org(actor_type)
        self.user = make_user()
        add_member(self.user, self.organization, role)

    @property
    def headers(self) -> dict[str, str]:
        return signed_in(self.user, self.organization)


def admin_headers() -> dict[str, str]:
    return signed_in(make_admin())


def collected(market: Market, industrial: Organization, distributor: Organization, *, day: int = 0,
              price_cents: int = 100_000) -> Reservation:
    """An approved reservation whose total is collected (`reservation_total_paid`)."""
    reservation = market.reservation(industrial, distributor, day=day, price_cents=price_cents)
    collect.collect(reservation_id=reservation.id, industrial_organization_id=industrial.id,
                       method=PaymentMethod.BANK_TRANSFER, key=f"test-{reservation.id}", user_id=None,
                       config=booted_config())
    return reservation


def sign_mandate(organization: Organization) -> SelfBillingMandate:
    now = clock.now()
    return SelfBillingMandate.create(organization_id=organization.id, status=SelfBillingMandateStatus.SIGNED,
                                     esign_request_ref=f"test-{uuid.uuid4()}", requested_at=now, signed_at=now)
