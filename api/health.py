"""`GET /api/health`: process liveness and in-memory counters; never touches the database.
`GET /api/health/ready`: readiness, whether this process can serve (PostgreSQL and Redis answer).

A platform's liveness probe restarts a process that does not answer `/api/health`; its readiness
probe (or a router's health check) takes a process out of rotation while `/api/health/ready` is
503, and a restart would not help there: the cause is a server this process cannot reach, named in
the answer and in the log. `HEAD` answers both, as probes often send it.
"""

from __future__ import annotations

import peewee
import redis

from api.access import PUBLIC, Route
from api.operations import operation
from api.telemetry import Telemetry
from backend import db
from backend.config import Config
from backend.errors import ServiceUnavailable
from backend.logs import get_logger
from schemas.health import HealthOut, ReadyOut

log = get_logger("api-health")


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

    on_head = on_get


def _cause(exc: BaseException) -> str:
    """The first line of what the client said (the refused connection, the wrong password)."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class Ready:
    """Each check runs on every probe, with short timeouts: a probe answers within seconds."""

    uses_database = False  # the check opens (and gives back) its own connection, to report its failure

    def __init__(self, config: Config) -> None:
        self.redis = redis.Redis.from_url(config.redis_url, socket_connect_timeout=2, socket_timeout=2) \
            if config.redis_url else None

    def _problems(self) -> list[str]:
        problems = []
        try:
            opened = db.open_connection()
            try:
                db.database.execute_sql("SELECT 1")
            finally:
                if opened:
                    db.close_connection()
        except (ServiceUnavailable, peewee.OperationalError, peewee.InterfaceError) as exc:
            problems.append(f"PostgreSQL: {_cause(exc)}")
        if self.redis is not None:
            try:
                self.redis.ping()
            except redis.RedisError as exc:
                problems.append(f"Redis: {_cause(exc)}")
        return problems

    @operation("Readiness of this process: PostgreSQL and Redis answer", tags=("operations",), answer=ReadyOut,
               answer_description="ready to serve", errors={503: "PostgreSQL or Redis unreachable (each named)"})
    def on_get(self, req, resp) -> dict:
        problems = self._problems()
        if problems:
            log.warning("not ready", extra={"fields": {"problems": problems}})
            raise ServiceUnavailable("not ready: " + "; ".join(problems), problems=problems)
        return {"status": "ready"}

    on_head = on_get


def routes(deps) -> list[Route]:
    return [Route("/api/health", Health(deps.config, deps.telemetry), PUBLIC),
            Route("/api/health/ready", Ready(deps.config), PUBLIC)]
