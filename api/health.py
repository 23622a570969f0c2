"""`GET /api/health`: process liveness and in-memory counters; never touches the database."""

from __future__ import annotations

from api.access import PUBLIC, Route
from api.operations import operation
from api.telemetry import Telemetry
from backend.config import Config
from schemas.health import HealthOut


class Health:
    uses_database = False

    def __init__(self, config: Config, telemetry: Telemetry) -> None:
        self.config = config
        self.telemetry = telemetry

    @operation("Health of this process (no database check)", tags=("operations",), answer=HealthOut,
               answer_description="the process answers")
    def on_get(self, req, resp) -> dict:
        return {
            "service": self.config.service_name,
            "status": "ok",
            "environment": self.config.environment,
            "uptimeSeconds": self.telemetry.uptime_seconds(),
            "telemetry": {
                "apiRequestsTotal": self.telemetry.requests_total,
                "apiErrorsTotal": self.telemetry.errors_total,
            },
        }


def routes(deps) -> list[Route]:
    return [Route("/api/health", Health(deps.config, deps.telemetry), PUBLIC)]
