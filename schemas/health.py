from __future__ import annotations

from marshmallow import Schema, fields


class Telemetry(Schema):
    apiRequestsTotal = fields.Integer(required=True)
    apiErrorsTotal = fields.Integer(required=True, metadata={"description": "responses with status >= 500"})


class HealthOut(Schema):
    service = fields.String(required=True)
    status = fields.String(required=True, metadata={"enum": ["ok"], "description": "this process answers"})
    environment = fields.String(required=True)
    uptimeSeconds = fields.Float(required=True)
    telemetry = fields.Nested(Telemetry, required=True)

    def dump(self, obj: dict, *, many: bool | None = None) -> dict:
        """Answered as built: `api.health` builds exactly these fields as plain values, on every
        liveness probe. The fields above document the answer; tests/test_health.py holds the
        answer equal to their field-by-field dump."""
        return obj


class ReadyOut(Schema):
    status = fields.String(required=True, metadata={"enum": ["ready"],
                                                    "description": "PostgreSQL and Redis answer this process"})
