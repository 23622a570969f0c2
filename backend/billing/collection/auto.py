"""Auto-collection (spec C): every passage of a reservation to `approved` collects it
asynchronously, never touching the approval, and a retry pass collects again what is still due.

- `auto_collect`: the `reservation.approved` subscriber; by direct debit under the industrial's
  active SEPA mandate, else by bank transfer, with the key `auto-collect-<reservationId>`
  (`collect.auto_collect_key`).
- `retry_due_collections`: a reservation whose auto-collection failed (a KYB reopened, a missing
  mandate, a transient error) would otherwise be served and never invoiced. Every
  `principal_seller` reservation `approved` or `completed` whose collection is still due (no
  financial record yet, or `reservation_total_due`) and was last tried at least
  `AUTO_COLLECTION_RETRY_MINUTES` ago is collected again with its auto-collection key (a failed
  flow stores nothing for the key); one still due is marked tried (its record's `updated_at`) so
  the next try waits the interval again. A reservation whose direct debit the bank returned is
  left to an admin once its mandate's retries are stopped
  (`billing_sepa_mandate.retries_stopped_at`, docs/bank.md).
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

from peewee import JOIN

from backend import clock
from backend.billing import records, sepa_mandates
from backend.billing.collection import again
from backend.billing.collection.collect import Collected, auto_collect_key, collect
from backend.billing.models import (
    FinancialRecord,
    FinancialStatus,
    PaymentOrder,
    SepaMandate,
    Settlement,
)
from backend.billing.reservations import COLLECTABLE
from backend.config import Config
from backend.db import transaction
from backend.errors import DomainError
from backend.logs import log_event
from backend.marketplace.models import Reservation
from backend.marketplace.pricing import BillingModel, resolve_billing_model


def auto_collect(reservation_id: str, *, config: Config) -> Collected | None:
    """The `reservation.approved` subscriber: collect asynchronously, never touching the approval.
    A domain refusal is logged (`auto_failed`) and leaves `reservation_total_due` for the manual
    route; an unexpected error is logged and raised, so the worker retries it."""
    reservation = Reservation.get_or_none(Reservation.id == reservation_id)
    if reservation is None or reservation.status not in COLLECTABLE:
        return None
    if resolve_billing_model(reservation.billing_model) is not BillingModel.PRINCIPAL_SELLER:
        log_event("billing.reservation.collect.auto_skipped", "auto-collection skipped: not principal_seller",
                  "info", reservationId=reservation_id, billingModel=BillingModel.LEGACY_MANDATE.value)
        return None
    organization_id = reservation.industrial_organization_id
    method = sepa_mandates.default_method(organization_id)
    fields = {"reservationId": reservation_id, "paymentMethod": method.value}
    log_event("billing.reservation.collect.auto_triggered", "auto-collection triggered", "info", **fields)
    try:
        result = collect(reservation_id=reservation_id, industrial_organization_id=organization_id,
                         method=method, user_id=None, config=config, auto=True,
                         key=auto_collect_key(reservation_id, again.returned_orders(reservation_id)))
    except DomainError as exc:
        log_event("billing.reservation.collect.auto_failed", "auto-collection failed", "warn", **fields,
                  code=exc.code, errorMessage=exc.message)
        return None
    except Exception as exc:
        log_event("billing.reservation.collect.auto_failed", "auto-collection failed", "error", **fields,
                  code="INTERNAL_ERROR", errorMessage=str(exc))
        raise
    log_event("billing.reservation.collect.auto_succeeded", "auto-collection succeeded", "info", **fields,
              invoiceNumber=result.invoice_number, idempotent=result.idempotent)
    return result


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
            collected = auto_collect(reservation_id, config=config)
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
