"""Data recovery of legacy reservations (spec C point 2; `vitrine billing recover-legacy`).

Reservations created before the principal-seller model hold `billingModel = legacy_mandate` (or
nothing, which the resolver reads as legacy) and a zero commission: collected as
`principal_seller` they would carry 0 % commission. The recovery moves those never billed (no
financial record, or one still `draft`, or one `deposit_due` whose legacy collection failed:
nothing invoiced nor paid; not `rejected` or `cancelled`) to `principal_seller`, their commission
recomputed on the store base at the configured `PLATFORM_COMMISSION_RATE_BPS`, the Specification
C invariant checked before each write. A failed legacy collection's record is reset to the
recovered amounts and moved `deposit_due -> reservation_total_due` (migration 148), so the
collection (and its retry pass) takes it. Reservations already collected under the legacy
mandate keep it (their invoices exist). Each change is in the billing audit trail
(`billing.recover_legacy`, the before and after values). `dry_run` reports the same changes and
writes nothing.
"""

from __future__ import annotations

from peewee import fn

from backend import clock
from backend.billing import records
from backend.billing.models import AuditEntry, FinancialRecord, FinancialStatus, Invoice, PaymentOrder
from backend.context import current_request_id
from backend.db import transaction
from backend.marketplace import pricing
from backend.marketplace.models import Reservation, ReservationStatus
from backend.marketplace.pricing import BillingModel


class _DryRun(Exception):
    pass


def recover_legacy(*, rate_bps: int, dry_run: bool) -> list[dict]:
    """The changes (`reservationId`, `status`, `before`, `after`), applied unless `dry_run`."""
    changes: list[dict] = []
    try:
        with transaction():
            billed = FinancialRecord.select(FinancialRecord.reservation_id).where(
                FinancialRecord.financial_status.not_in([FinancialStatus.DRAFT, FinancialStatus.DEPOSIT_DUE])
                | fn.EXISTS(Invoice.select().where(Invoice.reservation_id == FinancialRecord.reservation_id))
                | fn.EXISTS(PaymentOrder.select().where(PaymentOrder.reservation_id == FinancialRecord.reservation_id)))
            candidates = (Reservation.select()
                          .where((Reservation.billing_model.is_null())
                                 | (Reservation.billing_model != BillingModel.PRINCIPAL_SELLER.value),
                                 Reservation.status.not_in([ReservationStatus.REJECTED, ReservationStatus.CANCELLED]),
                                 Reservation.id.not_in(billed))
                          .order_by(Reservation.created_at, Reservation.id).for_update())
            for reservation in candidates:
                priced = pricing.price(reservation.base_amount_cents, rate_bps)
                record = FinancialRecord.select().where(FinancialRecord.reservation_id == reservation.id,
                                                        FinancialRecord.financial_status
                                                        == FinancialStatus.DEPOSIT_DUE).for_update().first()
                changes.append({
                    "reservationId": reservation.id, "status": reservation.status,
                    "before": {"billingModel": reservation.billing_model,
                               "commissionAmountCents": reservation.commission_amount_cents,
                               "totalAmountCents": reservation.total_amount_cents,
                               "commissionRateBps": reservation.commission_rate_bps,
                               **({"financialStatus": record.financial_status} if record else {})},
                    "after": {"billingModel": BillingModel.PRINCIPAL_SELLER.value,
                              "commissionAmountCents": priced.commission_cents,
                              "totalAmountCents": priced.total_cents, "commissionRateBps": rate_bps,
                              **({"financialStatus": FinancialStatus.RESERVATION_TOTAL_DUE.value} if record else {})},
                })
                if record is not None:  # a failed legacy collection: collected as principal_seller from now on
                    records.check_transition(FinancialStatus.DEPOSIT_DUE, FinancialStatus.RESERVATION_TOTAL_DUE)
                    (FinancialRecord.update(
                        billing_model=BillingModel.PRINCIPAL_SELLER.value,
                        financial_status=FinancialStatus.RESERVATION_TOTAL_DUE.value,
                        store_base_cents=reservation.base_amount_cents, commission_cents=priced.commission_cents,
                        total_cents=priced.total_cents, commission_rate_bps=rate_bps, updated_at=clock.now())
                     .where(FinancialRecord.reservation_id == reservation.id).execute())
                (Reservation.update(billing_model=BillingModel.PRINCIPAL_SELLER.value,
                                    commission_amount_cents=priced.commission_cents,
                                    total_amount_cents=priced.total_cents, commission_rate_bps=rate_bps,
                                    updated_at=clock.now())
                 .where(Reservation.id == reservation.id).execute())
                AuditEntry.create(action="billing.recover_legacy", reason="legacy data recovery (spec C)",
                                  reservation_id=reservation.id, details=changes[-1],
                                  request_id=current_request_id())
            if dry_run:
                raise _DryRun
    except _DryRun:
        pass
    return changes
