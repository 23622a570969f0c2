"""`GET /api/metrics`: Prometheus text format, for a bearer `METRICS_TOKEN` or an admin session.

Per web process (each gunicorn worker keeps its own request counters, as `/api/health` does;
scrape each process, or run one web process per container): requests by route template, method
and status, and their latency. At scrape time, from PostgreSQL and Redis: the outbox backlog
(not handed over, handed over but not done with the oldest one's age, dead), queue depths and
dead letters per Dramatiq queue, signature webhook events by status, invoices issued by kind,
e-invoice transmissions by status. `docs/operations.md` lists them with alert suggestions.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from api.access import PUBLIC, Route
from api.operations import operation
from backend import observability
from backend.errors import Forbidden, Unauthenticated


class RequestMetrics:
    """The request counter and latency histogram of one process, in its own registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("vitrine_http_requests", "API requests answered",
                                ("route", "method", "status"), registry=self.registry)
        self.latency = Histogram("vitrine_http_request_duration_seconds", "API request latency",
                                 ("route", "method"), registry=self.registry,
                                 buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
        # The labelled children per (route, method, status), looked up once: `labels()` checks
        # and locks on each call. As many entries as the metrics have series.
        self._children: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}

    def observe(self, *, route: str, method: str, status: int, seconds: float) -> None:
        children = self._children.get((route, method, status))
        if children is None:
            children = self._children[route, method, status] = (
                self.requests.labels(route, method, str(status)), self.latency.labels(route, method))
        children[0].inc()
        children[1].observe(seconds)


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
