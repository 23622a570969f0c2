"""Shapes of reservation incidents (spec C)."""

from __future__ import annotations

from marshmallow import EXCLUDE, Schema, fields, validate

from backend.billing.models import IncidentStatus
from backend.billing.self_billing.incidents import LIST_DEFAULT, LIST_MAX
from schemas.common import UtcDateTime, enum_of

TEXT = validate.Length(min=1, max=2000)
REASONS = ("ok", "not_industrial", "not_started", "window_closed", "incident_open")


class IncidentIn(Schema):
    reason = fields.String(required=True, validate=TEXT)


class ReleaseIn(Schema):
    resolutionNote = fields.String(required=True, validate=TEXT)


class IncidentOut(Schema):
    id = fields.String(required=True)
    reservationId = fields.String(attribute="reservation_id", required=True)
    organizationId = fields.String(attribute="organization_id", required=True,
                                   metadata={"description": "the reservation's industrial"})
    status = fields.String(required=True, metadata=enum_of(IncidentStatus))
    reason = fields.String(required=True)
    declaredByUserId = fields.String(attribute="declared_by_user_id", required=True)
    declaredAt = UtcDateTime(attribute="declared_at", required=True)
    resolutionNote = fields.String(attribute="resolution_note", allow_none=True)
    releasedByUserId = fields.String(attribute="released_by_user_id", allow_none=True)
    releasedAt = UtcDateTime(attribute="released_at", allow_none=True)


class IncidentAnswer(Schema):
    incident = fields.Nested(IncidentOut, required=True)


class EligibilityOut(Schema):
    canDeclare = fields.Boolean(attribute="can_declare", required=True)
    reason = fields.String(required=True, metadata=enum_of(REASONS))
    opensAt = UtcDateTime(attribute="opens_at", required=True, metadata={"description": "the reservation's startsAt"})
    closesAt = UtcDateTime(attribute="closes_at", required=True, metadata={
        "description": "23:59:59 Europe/Paris of the 3rd French business day after endsAt"})


class IncidentStateOut(Schema):
    incident = fields.Nested(IncidentOut, allow_none=True, required=True,
                             metadata={"description": "the open incident, else the latest released, else null"})
    eligibility = fields.Nested(EligibilityOut, required=True)


class IncidentsQuery(Schema):
    class Meta:
        unknown = EXCLUDE

    status = fields.String(load_default=IncidentStatus.OPEN.value,
                           validate=validate.OneOf([s.value for s in IncidentStatus]))
    limit = fields.Integer(load_default=LIST_DEFAULT, validate=validate.Range(min=1, max=LIST_MAX))
    offset = fields.Integer(load_default=0, validate=validate.Range(min=0, max=1_000_000))


class IncidentsOut(Schema):
    items = fields.List(fields.Nested(IncidentOut), required=True)
    total = fields.Integer(required=True)
    limit = fields.Integer(required=True)
    offset = fields.Integer(required=True)
