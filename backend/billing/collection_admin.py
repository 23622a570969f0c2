"""Collections the platform starts itself (API.md "Money that always balances"): the admin route and
the retry pass of auto-collection.

- `collect_on_behalf`: `POST /api/admin/billing/reservations/{id}/collect` (`billing.manage.all`,
  `Idempotency-Key`, body `{paymentMethod}`) runs the collection service on the industrial's
  behalf; its keys are scoped to the route and the reservation, never to the admin's active
  organization.
- `retry_due_collections`: a reservation whose auto-collection failed (a KYB reopened, a missing
  mandate, a transient error) would otherwise be served and never invoiced. Every
  `principal_seller` reservation `approved` or `completed` whose collection is still due (no
  financial record yet, or `reservation_total_due`) and was last tried at least
  `AUTO_COLLECTION_RETRY_MINUTES` ago is collected again with the key
  `auto-collect-<reservationId>` (a failed flow stores nothing for the key); one still due is
  marked tried (its record's `updated_at`) so the next try waits the interval again. A reservation
  whose direct debit the bank returned is left to an admin once its mandate's retries are stopped
  (`billing_sepa_mandate.retries_stopped_at`, docs/bank.md).
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

from peewee import JOIN

from backend import clock
from backend.billing import collection, records
from backend.billing.models import (
    FinancialRecord,
    FinancialStatus,
    PaymentMethod,
    PaymentOrder,
    SepaMandate,
    Settlement,
)
from backend.billing.reservations import COLLECTABLE
from backend.config import Config
from backend.db import transaction
from backend.errors import NotFound
from backend.logs import log_event
from backend.marketplace.models import Reservation
from backend.marketplace.pricing import BillingModel

ADMIN_COLLECT_ROUTE = "billing.admin.reservation.collect"


def collect_on_behalf(*, reservation_id: str, method: PaymentMethod, key: str, user_id: str | None,
                      config: Config) -> collection.Collected:
    """The admin route: the reservation's industrial organization collected, the key scoped to
    the route and the reservation (client keys `auto-collect-...` are 400)."""
    collection.check_client_key(key)
    industrial = (Reservation.select(Reservation.industrial_organization_id)
                  .where(Reservation.id == reservation_id).scalar())
    if industrial is None:
        raise NotFound("reservation not found")
    return collection.collect(reservation_id=reservation_id, industrial_organization_id=industrial, method=method,
                              key=key, user_id=user_id, config=config, scope=f"reservation:{reservation_id}",
                              route=ADMIN_COLLECT_ROUTE)


def due_collections(retry_after: timedelta) -> list[str]:
    """`principal_seller` reservations `approved` or `completed`, not collected, last tried (or
    approved) at least `retry_after` ago."""
    before = clock.now() - retry_after
    tried = FinancialRecord.updated_at
    stopped = (PaymentOrder.select(PaymentOrder.reservation_id)
               .join(SepaMandate, on=SepaMandate.mandate_ref == PaymentOrder.mandate_ref)
               .where(PaymentOrder.settlement == Settlement.RETURNED, SepaMandate.retries_stopped_at.is_null(False)))
    return [row.id for row in Reservation.select(Reservation.id)
            .join(FinancialRecord, JOIN.LEFT_OUTER, on=FinancialRecord.reservation_id == Reservation.id)
            .where(Reservation.status.in_(sorted(COLLECTABLE)),
                   Reservation.billing_model == BillingModel.PRINCIPAL_SELLER.value,
                   (FinancialRecord.reservation_id.is_null()
                    & (Reservation.approved_at.is_null() | (Reservation.approved_at <= before)))
                   | ((FinancialRecord.financial_status == FinancialStatus.RESERVATION_TOTAL_DUE) & (tried <= before)),
                   Reservation.id.not_in(stopped))
            .order_by(Reservation.approved_at, Reservation.id).limit(500)]


def retry_due_collections(*, config: Config) -> dict[str, int]:
    """One retry pass (the clock runs it every minute); its counters, logged. Never raises for one
    reservation."""
    ids = due_collections(timedelta(minutes=config.auto_collection_retry_minutes))
    counters: Counter[str] = Counter(due=len(ids))
    for reservation_id in ids:
        try:
            collected = collection.auto_collect(reservation_id, config=config)
        except Exception:  # logged by auto_collect (`auto_failed`); the next pass tries again
            collected = None
        if collected is not None:
            counters["collected"] += 1
            continue
        counters["failed"] += 1
        _tried(reservation_id)
    if ids:
        log_event("billing.reservation.collect.retry_pass", "auto-collection retry pass", "info",
                  **{name: counters[name] for name in ("due", "collected", "failed")})
    return {name: counters[name] for name in ("due", "collected", "failed")}


def _tried(reservation_id: str) -> None:
    """The reservation's record opened `reservation_total_due` when absent, its try time now."""
    with transaction():
        reservation = Reservation.get_by_id(reservation_id)
        records.open_record(reservation, FinancialStatus.RESERVATION_TOTAL_DUE)
        (FinancialRecord.update(updated_at=clock.now())
         .where(FinancialRecord.reservation_id == reservation_id,
                FinancialRecord.financial_status == FinancialStatus.RESERVATION_TOTAL_DUE).execute())
