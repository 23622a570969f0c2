"""In-memory counters for `/api/health` (reset when the process restarts, Specification A) and the
Prometheus request metrics of `/api/metrics`."""

from __future__ import annotations

import threading
import time

from api.metrics import RequestMetrics


class Telemetry:
    """`apiRequestsTotal` counts every request under /api; `apiErrorsTotal` those answered 5xx."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.started = time.monotonic()
        self.requests_total = 0
        self.errors_total = 0
        self.metrics = RequestMetrics()

    def count_request(self) -> None:
        with self._lock:
            self.requests_total += 1

    def count_error(self) -> None:
        with self._lock:
            self.errors_total += 1

    def uptime_seconds(self) -> float:
        return round(time.monotonic() - self.started, 3)
