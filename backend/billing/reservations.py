"""What billing reads of a reservation: whether it can be collected under a billing model, and
the label of its service on an invoice line."""

from __future__ import annotations

from datetime import datetime

from backend.errors import Conflict, NotFound
from backend.marketplace.models import AdSpace, Reservation, ReservationStatus, Store
from backend.marketplace.pricing import BillingModel, resolve_billing_model

COLLECTABLE = frozenset({ReservationStatus.APPROVED, ReservationStatus.COMPLETED})


def _scoped(reservation_id: str, industrial_organization_id: str):
    return Reservation.select().where(Reservation.id == reservation_id,
                                      Reservation.industrial_organization_id == industrial_organization_id)


def eligible_reservation(reservation_id: str, industrial_organization_id: str, model: BillingModel, *,
                         lock: bool = False) -> Reservation:
    query = _scoped(reservation_id, industrial_organization_id)
    reservation = (query.for_update() if lock else query).first()
    if reservation is None:
        raise NotFound("reservation not found")
    check_collectable(reservation.status, reservation.billing_model, model)
    return reservation


def check_collectable(status: str, billing_model: str | None, model: BillingModel) -> None:
    """Steps 1-2: `approved` or `completed`, and billed under `model` (409 otherwise)."""
    if status not in COLLECTABLE:
        raise Conflict(f"the reservation is {status}: only an approved or completed reservation is "
                       "collected", reason="reservation_not_approved", status=status)
    actual = resolve_billing_model(billing_model)
    if actual is not model:
        raise Conflict(f"the reservation is billed under {actual}, not {model}", reason=f"not_{model.value}",
                       billingModel=actual.value)


def service_label(reservation: Reservation) -> str:
    place = (AdSpace.select(AdSpace.name, Store.name.alias("store_name")).join(Store)
             .where(AdSpace.id == reservation.ad_space_id).dicts().get())
    return label_of(place["name"], place["store_name"], reservation.starts_at, reservation.ends_at)


def label_of(space_name: str, store_name: str, starts_at: datetime, ends_at: datetime) -> str:
    return f"Emplacement {space_name}, {store_name}, du {starts_at:%d/%m/%Y} au {ends_at:%d/%m/%Y}"
