"""Reservations: opened at checkout, reviewed by the distributor, counter-proposals answered by
the industrial.

    pending_review --approved--------> approved
    pending_review --rejected--------> rejected
    pending_review --counter_proposal-> counter_proposed --accept--> approved (pricing re-frozen)
                                                          --decline-> rejected

Any other move is 409 CONFLICT (API.md). Every passage to `approved` writes the
`reservation.approved` outbox row in the same transaction; the database's exclusion constraint
refuses a second `approved` reservation of one ad space on overlapping dates, whatever the
interleaving of concurrent approvals.
"""

from __future__ import annotations

from enum import StrEnum

from peewee import IntegrityError

from backend import clock, events
from backend.db import transaction
from backend.errors import Conflict, NotFound, ValidationError
from backend.listing import ListParams, Page, paginate
from backend.logs import log_event
from backend.marketplace import pricing
from backend.marketplace.kyb import require_kyb_approved
from backend.marketplace.models import (
    AdSpace,
    Campaign,
    FurnitureType,
    FurnitureTypeVersion,
    Reservation,
    ReservationStatus,
    Store,
    violated_constraint,
)
from backend.marketplace.pricing import BillingModel

RESERVATION_SORTS = {
    "createdAt": Reservation.created_at,
    "startsAt": Reservation.starts_at,
    "status": Reservation.status,
    "totalAmountCents": Reservation.total_amount_cents,
}


class Review(StrEnum):
    APPROVED = "approved"
    REJECTED = "rejected"
    COUNTER_PROPOSAL = "counter_proposal"


def open_reservation(
    *, industrial_organization_id: str, campaign: Campaign, ad_space: AdSpace, priced: pricing.Pricing,
    created_by_user_id: str | None,
) -> Reservation:
    """A `pending_review` reservation with the pricing and furniture configuration frozen."""
    version = (
        FurnitureTypeVersion.select(FurnitureTypeVersion.id)
        .join(FurnitureType)
        .where(FurnitureType.id == ad_space.promo_furniture_type_id,
               FurnitureTypeVersion.version == FurnitureType.current_version)
        .get()
    )
    return Reservation.create(
        industrial_organization_id=industrial_organization_id,
        distributor_organization_id=ad_space.store.organization_id,
        campaign=campaign,
        ad_space=ad_space,
        furniture_type_version=version.id,
        starts_at=campaign.starts_at,
        ends_at=campaign.ends_at,
        status=ReservationStatus.PENDING_REVIEW,
        created_by_user_id=created_by_user_id,
        **_frozen(priced),
    )


def _frozen(priced: pricing.Pricing) -> dict:
    """The columns of a frozen pricing, written only once the Specification C invariant holds."""
    pricing.check_invariant(
        gross_cents=priced.total_cents, commission_cents=priced.commission_cents, net_cents=priced.base_cents
    )
    return {
        "billing_model": BillingModel.PRINCIPAL_SELLER.value,
        "base_amount_cents": priced.base_cents,
        "commission_amount_cents": priced.commission_cents,
        "total_amount_cents": priced.total_cents,
        "commission_rate_bps": priced.rate_bps,
    }


def review_reservation(
    *, reservation_id: str, distributor_organization_id: str, decision: Review,
    price_cents: int | None = None, note: str | None = None,
) -> Reservation:
    """The distributor's answer to a `pending_review` reservation of one of its stores."""
    if decision is Review.COUNTER_PROPOSAL and price_cents is None:
        raise ValidationError("a counter-proposal needs a price", fields={"priceCents": ["required"]})
    with transaction():
        reservation = _locked(reservation_id, Reservation.distributor_organization_id == distributor_organization_id)
        _expect(reservation, ReservationStatus.PENDING_REVIEW)
        reservation.review_note = note
        if decision is Review.APPROVED:
            _approve(reservation)
        elif decision is Review.REJECTED:
            _move(reservation, ReservationStatus.REJECTED)
        else:
            reservation.counter_price_cents = price_cents
            _move(reservation, ReservationStatus.COUNTER_PROPOSED)
    return joined_reservations([reservation_id])[0]


def accept_counter_proposal(*, reservation_id: str, industrial_organization_id: str, rate_bps: int) -> Reservation:
    """Approve at the counter-proposed price: the pricing is re-frozen at today's rate and the
    reservation persisted as `principal_seller` (Specification C)."""
    with transaction():
        require_kyb_approved(industrial_organization_id)
        reservation = _locked(reservation_id, Reservation.industrial_organization_id == industrial_organization_id)
        _expect(reservation, ReservationStatus.COUNTER_PROPOSED)
        for column, value in _frozen(pricing.price(reservation.counter_price_cents, rate_bps)).items():
            setattr(reservation, column, value)
        _approve(reservation)
    return joined_reservations([reservation_id])[0]


def decline_counter_proposal(*, reservation_id: str, industrial_organization_id: str) -> Reservation:
    with transaction():
        reservation = _locked(reservation_id, Reservation.industrial_organization_id == industrial_organization_id)
        _expect(reservation, ReservationStatus.COUNTER_PROPOSED)
        _move(reservation, ReservationStatus.REJECTED)
    return joined_reservations([reservation_id])[0]


def _approve(reservation: Reservation) -> None:
    reservation.approved_at = clock.now()
    try:
        _move(reservation, ReservationStatus.APPROVED)
    except IntegrityError as exc:
        if violated_constraint(exc) == "reservation_no_double_booking":
            raise Conflict(
                "the ad space is already booked on overlapping dates", adSpaceId=reservation.ad_space_id
            ) from None
        raise
    events.publish(events.RESERVATION_APPROVED, reservation.id)


def _move(reservation: Reservation, status: ReservationStatus) -> None:
    reservation.status = status
    reservation.updated_at = clock.now()
    with transaction():  # a savepoint: a refused write leaves the caller's transaction usable
        reservation.save()


def _expect(reservation: Reservation, status: ReservationStatus) -> None:
    if reservation.status != status:
        raise Conflict(
            f"the reservation is {reservation.status}, not {status}", status=reservation.status, expected=status.value
        )


def _locked(reservation_id: str, scope) -> Reservation:
    reservation = Reservation.select().where(Reservation.id == reservation_id, scope).for_update().first()
    if reservation is None:
        raise NotFound("reservation not found")
    return reservation


def _joined():
    return (
        Reservation.select(Reservation, AdSpace, Store, Campaign)
        .join(AdSpace)
        .join(Store)
        .switch(Reservation)
        .join(Campaign)
    )


def _of(organization_id: str | None):
    return (Reservation.industrial_organization_id == organization_id) | (
        Reservation.distributor_organization_id == organization_id
    )


def list_reservations(*, organization_id: str, params: ListParams, status: str | None = None) -> Page:
    """The organization's reservations, as industrial or as distributor, with ad space, store and
    campaign joined: one query per page."""
    query = _joined().where(_of(organization_id))
    if status:
        query = query.where(Reservation.status == status)
    return paginate(query, params, sorts=RESERVATION_SORTS, default_sort="createdAt", tiebreaker=Reservation.id,
                    search_columns=(AdSpace.name, Store.name, Campaign.name))


def joined_reservations(ids: list[str]) -> list[Reservation]:
    """Reservations with ad space, store and campaign loaded, in the order of `ids` (one query)."""
    by_id = {r.id: r for r in _joined().where(Reservation.id.in_(ids))}
    return [by_id[i] for i in ids]


def visible_reservation(*, reservation_id: str, organization_id: str | None, is_admin: bool) -> Reservation:
    """The reservation for its industrial, its distributor or an admin; anyone else gets 404."""
    query = _joined().where(Reservation.id == reservation_id)
    if not is_admin:
        query = query.where(_of(organization_id))
    reservation = query.first()
    if reservation is None:
        raise NotFound("reservation not found")
    return reservation


def announce_reservation_approved(reservation_id: str) -> None:
    """A subscriber of `reservation.approved` (`backend.events`): the passage is logged."""
    reservation = Reservation.get_or_none(Reservation.id == reservation_id)
    if reservation is None or reservation.status != ReservationStatus.APPROVED:
        return
    log_event("marketplace.reservation.approved", "reservation approved", "info",
              reservationId=reservation.id, billingModel=pricing.resolve_billing_model(reservation.billing_model))
