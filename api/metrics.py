"""`GET /api/metrics`: Prometheus text format, for a bearer `METRICS_TOKEN` or an admin session.

Per web process (each gunicorn worker keeps its own request counters, as `/api/health` does;
scrape each process, or run one web process per container): requests by route template, method
and status, and their latency. At scrape time, from PostgreSQL and Redis: the outbox backlog
(not handed over, handed over but not done with the oldest one's age, dead), the times the
broker's Redis lost data (`vitrine_outbox_redis_data_lost_total`), queue depths and
dead letters per Dramatiq queue, signature webhook events by status, invoices issued by kind,
e-invoice transmissions by status. `docs/operations.md` lists them with alert suggestions.
"""

from __future__ import annotations

import hmac
import threading
import time
from bisect import bisect_left
from collections.abc import Callable
from itertools import accumulate

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

from api.access import PUBLIC, Route
from api.operations import operation
from backend import observability
from backend.errors import Forbidden, Unauthenticated

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


class RequestMetrics:
    """The request counter and latency histogram of one process, in its own registry.

    Recorded on every request under one lock and exposed at scrape time as the series a
    prometheus_client `Counter` (`vitrine_http_requests_total`, `_created`) and `Histogram`
    (`vitrine_http_request_duration_seconds_bucket`, `_count`, `_sum`, `_created`) would give:
    those cost label checks and one lock per value on every request, a large share of what the
    whole middleware chain of `GET /api/health` adds to Falcon (tests/reliability/test_metrics.py
    holds both expositions equal)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (route, method, status) -> [count, created, its (route, method) latency]; a latency is
        # [count per bucket (+Inf last), sum, created], shared by the statuses of its route and method.
        self._series: dict[tuple[str, str, int], list] = {}
        self._latency: dict[tuple[str, str], list] = {}
        self.registry = CollectorRegistry()
        self.registry.register(self)

    def observe(self, *, route: str, method: str, status: int, seconds: float) -> None:
        bucket = bisect_left(LATENCY_BUCKETS, seconds)  # the first bound >= seconds, as `le` reads
        series = self._series.get((route, method, status)) or self._add_series(route, method, status)
        latency = series[2]
        with self._lock:
            series[0] += 1
            latency[0][bucket] += 1
            latency[1] += seconds

    def _add_series(self, route: str, method: str, status: int) -> list:
        with self._lock:
            latency = self._latency.setdefault((route, method), [[0] * (len(LATENCY_BUCKETS) + 1), 0.0, time.time()])
            return self._series.setdefault((route, method, status), [0, time.time(), latency])

    def collect(self):
        with self._lock:
            requests = [((route, method, str(status)), count, created)
                        for (route, method, status), (count, created, _) in self._series.items()]
            latency = [(labels, list(counts), total, created)
                       for labels, (counts, total, created) in self._latency.items()]
        counter = CounterMetricFamily("vitrine_http_requests", "API requests answered",
                                      labels=("route", "method", "status"))
        for labels, count, created in requests:
            counter.add_metric(labels, count, created=created)
        yield counter
        histogram = HistogramMetricFamily("vitrine_http_request_duration_seconds", "API request latency",
                                          labels=("route", "method"))
        bounds = [*map(floatToGoString, LATENCY_BUCKETS), "+Inf"]
        for (route, method), counts, total, created in latency:
            histogram.add_metric((route, method), list(zip(bounds, accumulate(counts), strict=True)), total)
            histogram.samples.append(Sample(f"{histogram.name}_created", {"route": route, "method": method}, created))
        yield histogram


class _StoredFigures:
    """Collected at scrape time: what PostgreSQL and Redis say now."""

    def __init__(self, queue_sizes: Callable[[], list[dict]]) -> None:
        self.queue_sizes = queue_sizes

    def collect(self):
        figures = observability.figures()
        backlog = figures["outbox"]
        outbox = GaugeMetricFamily("vitrine_outbox_rows", "Outbox rows by state", labels=("state",))
        for state, key in (("unsent", "unsent"), ("not_done", "notDone"), ("dead", "dead")):
            outbox.add_metric((state,), backlog[key])
        yield outbox
        yield CounterMetricFamily("vitrine_outbox_redis_data_lost",
                                  "Times the broker's Redis was found to have lost data (its work handed over again)",
                                  value=figures["redis_data_lost"])
        yield GaugeMetricFamily("vitrine_outbox_oldest_not_done_seconds",
                                "Age of the oldest outbox row handed over and not done",
                                value=backlog["oldestNotDoneSeconds"])
        for name, label, help_text in (
            ("webhook_events", "status", "Signature webhook events by processing status"),
            ("invoices", "kind", "Invoices issued, by kind"),
            ("transmissions", "status", "E-invoice transmissions by status"),
        ):
            family = GaugeMetricFamily(f"vitrine_{name}", help_text, labels=(label,))
            for value, count in sorted(figures[name].items()):
                family.add_metric((value,), count)
            yield family
        families = {key: GaugeMetricFamily(f"vitrine_queue_{key}", f"Dramatiq queue {key}", labels=("queue",))
                    for key in ("messages", "delayed", "dead")}
        for row in self.queue_sizes():
            for key, family in families.items():
                family.add_metric((row["queue"],), row[key])
        yield from families.values()


class Metrics:
    def __init__(self, metrics: RequestMetrics, token: str | None, queue_sizes: Callable[[], list[dict]]) -> None:
        self.metrics, self.token = metrics, token
        self.stored = CollectorRegistry()
        self.stored.register(_StoredFigures(queue_sizes))

    @operation("Prometheus metrics of this process and of the platform's queues and outbox",
               description="For an admin session or `Authorization: Bearer <METRICS_TOKEN>` (401 without either, "
                           "403 for another session or a wrong token).",
               tags=("operations",), produces="text/plain", answer_description="the Prometheus text format",
               errors={401: "UNAUTHENTICATED", 403: "FORBIDDEN"})
    def on_get(self, req, resp) -> None:
        self._authorize(req)
        resp.content_type = CONTENT_TYPE_LATEST
        resp.data = generate_latest(self.metrics.registry) + generate_latest(self.stored)

    def _authorize(self, req) -> None:
        principal = req.context.principal
        if principal is not None and principal.is_admin:
            return
        scheme, _, value = (req.get_header("Authorization") or "").strip().partition(" ")
        offered = value.strip() if scheme.lower() == "bearer" else ""
        if self.token and offered and hmac.compare_digest(offered.encode(), self.token.encode()):
            return
        if principal is None and not offered:
            raise Unauthenticated("sign in as an admin or send the metrics token")
        raise Forbidden("the metrics need an admin session or the metrics token")


def routes(deps) -> list[Route]:
    # The rule is checked by the resource: an admin session or the bearer token, either one.
    resource = Metrics(deps.telemetry.metrics, deps.config.metrics_token, deps.queue_sizes)
    return [Route("/api/metrics", resource, PUBLIC)]
