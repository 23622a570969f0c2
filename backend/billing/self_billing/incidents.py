"""Reservation incidents (spec C "Reservation incident", Incidents routes; API.md).

An industrial declares an incident on one of its reservations inside the window (`startsAt` to
the end of the third French business day after `endsAt`, `business_days`); while it is `open` it
blocks self-billing. An admin releases it with a resolution note; the release does not replay
self-billing (the scheduler's next pass picks the reservation up).

At most one `open` incident per reservation: the guard below answers 409 under the reservation's
row lock (declarations of one reservation queue on it), and the partial unique index
`billing_reservation_incident_one_open` holds whatever happens.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from peewee import IntegrityError

from backend import clock
from backend.billing import queries
from backend.billing.errors import IncidentWindowClosed
from backend.billing.models import AuditEntry, IncidentStatus, ReservationIncident
from backend.billing.self_billing.business_days import incident_window
from backend.clock import iso
from backend.context import current_request_id
from backend.db import transaction
from backend.errors import Conflict, NotFound, ValidationError
from backend.identity.principal import Principal
from backend.logs import log_event
from backend.marketplace.models import Reservation

LIST_DEFAULT, LIST_MAX = 50, 200


@dataclass(frozen=True)
class Eligibility:
    can_declare: bool
    reason: str  # ok, not_industrial, not_started, window_closed, incident_open
    opens_at: datetime
    closes_at: datetime


@dataclass(frozen=True)
class IncidentState:
    incident: ReservationIncident | None  # the open one, else the latest released
    eligibility: Eligibility


@dataclass(frozen=True)
class IncidentPage:
    items: list[ReservationIncident]
    total: int
    limit: int
    offset: int


def open_incident(reservation_id: str) -> ReservationIncident | None:
    return ReservationIncident.get_or_none(ReservationIncident.reservation_id == reservation_id,
                                           ReservationIncident.status == IncidentStatus.OPEN)


def _required(value: str | None, field: str) -> str:
    value = (value or "").strip()
    if not value:
        raise ValidationError(f"{field} is required", fields={field: ["required"]})
    return value


def _declaration_refusal(reservation: Reservation) -> str | None:
    """Why the reservation's industrial cannot declare now (None: it can)."""
    if open_incident(reservation.id) is not None:
        return "incident_open"
    position = incident_window(reservation.starts_at, reservation.ends_at).position(clock.now())
    return None if position == "open" else position


def eligibility(*, principal: Principal, reservation_id: str) -> IncidentState:
    """The reservation's incident and whether one may be declared, for its industrial or
    distributor organization, or an admin (404 for anyone else)."""
    reservation = queries.visible_reservation(principal, reservation_id)
    window = incident_window(reservation.starts_at, reservation.ends_at)
    is_industrial = ("industrial" in principal.roles
                     and principal.active_organization_id == reservation.industrial_organization_id)
    reason = "not_industrial" if not is_industrial else (_declaration_refusal(reservation) or "ok")
    latest = (ReservationIncident.select().where(ReservationIncident.reservation_id == reservation.id)
              .order_by((ReservationIncident.status == IncidentStatus.OPEN).desc(),
                        ReservationIncident.declared_at.desc(), ReservationIncident.id.desc()).first())
    return IncidentState(latest, Eligibility(reason == "ok", reason, window.opens_at, window.closes_at))


def declare(*, reservation_id: str, industrial_organization_id: str, user_id: str,
            reason: str) -> ReservationIncident:
    """Open an incident on the industrial's reservation: 404 for another organization's, 409
    `incident_open` when one is open, 422 `INCIDENT_WINDOW_CLOSED` outside the window."""
    reason = _required(reason, "reason")
    try:
        with transaction():
            reservation = (Reservation.select()
                           .where(Reservation.id == reservation_id,
                                  Reservation.industrial_organization_id == industrial_organization_id)
                           .for_update().first())
            if reservation is None:
                raise NotFound("reservation not found")
            refusal = _declaration_refusal(reservation)
            if refusal == "incident_open":
                raise Conflict("an incident is already open on this reservation", reason="incident_open")
            if refusal is not None:
                window = incident_window(reservation.starts_at, reservation.ends_at)
                raise IncidentWindowClosed(
                    "the incident window is " + ("not open yet" if refusal == "not_started" else "closed"),
                    reason=refusal, opensAt=iso(window.opens_at), closesAt=iso(window.closes_at))
            now = clock.now()
            incident = ReservationIncident.create(
                reservation_id=reservation.id, organization_id=industrial_organization_id,
                status=IncidentStatus.OPEN, reason=reason, declared_by_user_id=user_id, declared_at=now,
                created_at=now, updated_at=now)
    except IntegrityError:  # the partial unique index: another declaration won the race
        raise Conflict("an incident is already open on this reservation", reason="incident_open") from None
    log_event("billing.reservation.incident.declared", "reservation incident declared", "info",
              incidentId=incident.id, reservationId=reservation_id, organizationId=industrial_organization_id)
    return incident


def release(*, incident_id: str, user_id: str, resolution_note: str) -> ReservationIncident:
    """Release an open incident (409 `incident_released` when it is not open), with an audit entry."""
    note = _required(resolution_note, "resolutionNote")
    with transaction():
        incident = ReservationIncident.select().where(ReservationIncident.id == incident_id).for_update().first()
        if incident is None:
            raise NotFound("incident not found")
        if incident.status != IncidentStatus.OPEN:
            raise Conflict("the incident is already released", reason="incident_released")
        now = clock.now()
        incident.status, incident.resolution_note = IncidentStatus.RELEASED, note
        incident.released_by_user_id, incident.released_at, incident.updated_at = user_id, now, now
        incident.save(only=[ReservationIncident.status, ReservationIncident.resolution_note,
                            ReservationIncident.released_by_user_id, ReservationIncident.released_at,
                            ReservationIncident.updated_at])
        AuditEntry.create(action="billing.reservation.incident.released", actor_user_id=user_id, reason=note,
                          reservation_id=incident.reservation_id, details={"incidentId": incident.id},
                          request_id=current_request_id())
    log_event("billing.reservation.incident.released", "reservation incident released", "info",
              incidentId=incident.id, reservationId=incident.reservation_id)
    return incident


def list_incidents(*, status: IncidentStatus = IncidentStatus.OPEN, limit: int = LIST_DEFAULT,
                   offset: int = 0) -> IncidentPage:
    """Incidents of one status, newest declaration first."""
    query = ReservationIncident.select().where(ReservationIncident.status == IncidentStatus(status))
    limit = max(1, min(limit, LIST_MAX))
    items = query.order_by(ReservationIncident.declared_at.desc(), ReservationIncident.id.desc()) \
        .limit(limit).offset(max(0, offset))
    return IncidentPage(list(items), query.count(), limit, offset)
