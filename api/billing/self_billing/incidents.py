"""Reservation incidents (spec C "Incidents"): declare, read with eligibility, release, list."""

from __future__ import annotations

from api.access import BILLING_MANAGER, Route, roles
from api.operations import operation
from api.requests import acting_organization
from backend.billing.self_billing import incidents
from schemas.billing.self_billing.incidents import (
    IncidentAnswer,
    IncidentIn,
    IncidentsOut,
    IncidentsQuery,
    IncidentStateOut,
    ReleaseIn,
)

DECLARER = roles("industrial", kyb_required=True)
READERS = roles("industrial", "distributor", "admin", kyb_required=True)
WINDOW = ("The window opens at the reservation's `startsAt` and closes at 23:59:59 Europe/Paris of the third French "
          "business day (Monday to Friday, not a public holiday) after the day of its `endsAt`. ")


class ReservationIncident:
    @operation("Declare an incident on a reservation",
               description=WINDOW + "For an industrial member of the reservation's industrial organization (404 for "
               "another's reservation). 422 `INCIDENT_WINDOW_CLOSED` outside the window (`details.reason` "
               "`not_started` or `window_closed`); 409 `CONFLICT` (`incident_open`) when one is open. An open "
               "incident blocks self-billing.",
               tags=("billing",), body=IncidentIn, answer=IncidentAnswer, status=201)
    def on_post(self, req, resp, reservation_id: str, body: dict) -> dict:
        return {"incident": incidents.declare(reservation_id=reservation_id,
                                              industrial_organization_id=acting_organization(req, "industrial"),
                                              user_id=req.context.principal.user_id, reason=body["reason"])}

    @operation("A reservation's incident and whether one may be declared",
               description=WINDOW + "For the reservation's industrial or distributor organization, or an admin (404 "
               "otherwise). `eligibility.reason`: `ok`, `not_industrial` (the caller is not the reservation's "
               "industrial), `not_started`, `window_closed`, `incident_open`.",
               tags=("billing",), answer=IncidentStateOut)
    def on_get(self, req, resp, reservation_id: str) -> incidents.IncidentState:
        return incidents.eligibility(principal=req.context.principal, reservation_id=reservation_id)


class IncidentRelease:
    @operation("Release an incident",
               description="`billing.manage.all`. `resolutionNote` required; 409 when the incident is already "
               "released. Audited. Does not self-bill: the scheduler's next pass picks the reservation up.",
               tags=("billing",), body=ReleaseIn, answer=IncidentAnswer)
    def on_post(self, req, resp, incident_id: str, body: dict) -> dict:
        return {"incident": incidents.release(incident_id=incident_id, user_id=req.context.principal.user_id,
                                              resolution_note=body["resolutionNote"])}


class Incidents:
    @operation("List incidents",
               description="`billing.manage.all`. `status` `open` (default) or `released` (the archive), newest "
               "declaration first; `limit` default 50, max 200; `offset`.",
               tags=("billing",), query=IncidentsQuery, answer=IncidentsOut)
    def on_get(self, req, resp, query: dict) -> incidents.IncidentPage:
        return incidents.list_incidents(status=query["status"], limit=query["limit"], offset=query["offset"])


def routes(deps) -> list[Route]:
    return [
        Route("/api/billing/reservations/{reservation_id}/incident", ReservationIncident(),
              {"POST": DECLARER, "GET": READERS}),
        Route("/api/admin/billing/incidents/{incident_id}/release", IncidentRelease(), BILLING_MANAGER),
        Route("/api/admin/billing/incidents", Incidents(), BILLING_MANAGER),
    ]
