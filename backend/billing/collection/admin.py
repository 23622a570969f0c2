"""The admin's collection (API.md "Money that always balances"):
`POST /api/admin/billing/reservations/{id}/collect` (`billing.manage.all`, `Idempotency-Key`, body
`{paymentMethod}`) runs the collection service on the industrial's behalf; its keys are scoped to
the route and the reservation, never to the admin's active organization.
"""

from __future__ import annotations

from backend.billing.collection import collect
from backend.billing.models import PaymentMethod
from backend.config import Config
from backend.errors import NotFound
from backend.marketplace.models import Reservation

ADMIN_COLLECT_ROUTE = "billing.admin.reservation.collect"


def collect_on_behalf(*, reservation_id: str, method: PaymentMethod | None, key: str, user_id: str | None,
                      config: Config) -> collect.Collected:
    """The admin route: the reservation's industrial organization collected, the key scoped to
    the route and the reservation (client keys `auto-collect-...` are 400)."""
    collect.check_client_key(key)
    industrial = (Reservation.select(Reservation.industrial_organization_id)
                  .where(Reservation.id == reservation_id).scalar())
    if industrial is None:
        raise NotFound("reservation not found")
    return collect.collect(reservation_id=reservation_id, industrial_organization_id=industrial, method=method,
                           key=key, user_id=user_id, config=config, scope=f"reservation:{reservation_id}",
                           route=ADMIN_COLLECT_ROUTE)
