"""`GET /api/health`: process liveness and in-memory counters; never touches the database."""

from __future__ import annotations

from api.responses import send
from api.telemetry import Telemetry
from backend.config import Config


class Health:
    uses_database = False

    def __init__(self, config: Config, telemetry: Telemetry) -> None:
        self.config = config
        self.telemetry = telemetry

    def on_get(self, req, resp) -> None:
        """Process liveness.
        ---
        summary: Health of this process (no database check)
        tags: [operations]
        responses:
          200:
            description: the process answers
            content:
              application/json:
                schema: HealthEnvelope
        """
        send(
            resp,
            {
                "service": self.config.service_name,
                "status": "ok",
                "environment": self.config.environment,
                "uptimeSeconds": self.telemetry.uptime_seconds(),
                "telemetry": {
                    "apiRequestsTotal": self.telemetry.requests_total,
                    "apiErrorsTotal": self.telemetry.errors_total,
                },
            },
        )
