"""A closed-loop HTTP load generator: N keep-alive connections, each sending its next request as
soon as the previous answer has been read.

The connections are spread over a few client processes (spawned, not forked: the caller may hold
database connections and threads) so the client is not bound by one interpreter's GIL; each
process runs one thread per connection with `http.client`. Every process first warms up (new
connections, server caches), then all of them record the same wall-clock window: a request counts
when it starts inside the window. The client shares the machine's cores with the server, so
compare the figures with a reference measured by the same client and settings, not in absolute.

`run_load` GETs one URL for a time window; `run_plan` sends a fixed list of `PlannedRequest`s
(method, path, body, headers each of its own, e.g. signed webhook deliveries), shared out over
the connections, and measures from the common start to the last answer.

`ServerCost` keeps the windows a server answered and the CPU its processes spent in them: the
server CPU per answer of `bench health`, `session` and `webhook`, each against its bare app.
"""

from __future__ import annotations

import http.client
import math
import multiprocessing
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

# Time for the spawned interpreters to start before their warm-up begins.
_SPAWN_MARGIN_SECONDS = 1.0


@dataclass(frozen=True)
class LoadResult:
    requests: int  # answers to requests started in the measured window
    seconds: float
    non_2xx: int
    errors: int
    answered: int  # every answer, warm-up included: the work the server did during the run
    latencies_ms: tuple[float, ...] = field(repr=False)

    @property
    def throughput(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    @property
    def p50_ms(self) -> float:
        return percentile(self.latencies_ms, 0.50)

    @property
    def p99_ms(self) -> float:
        return percentile(self.latencies_ms, 0.99)

    @classmethod
    def combine(cls, results: list[LoadResult]) -> LoadResult:
        """Several windows (rounds) as one: counts and durations add up, latencies pool."""
        return cls(
            requests=sum(r.requests for r in results),
            seconds=sum(r.seconds for r in results),
            non_2xx=sum(r.non_2xx for r in results),
            errors=sum(r.errors for r in results),
            answered=sum(r.answered for r in results),
            latencies_ms=tuple(sorted(x for r in results for x in r.latencies_ms)),
        )


class ServerCost:
    """The load windows one server (`ops.bench.stack.Server`) answered and the CPU time its
    processes (gunicorn master and workers) spent while each ran: the server's own cost per
    answer, which hardly moves with the machine's other load, unlike throughput and latency."""

    def __init__(self, server) -> None:
        self.server = server
        self.windows: list[LoadResult] = []
        self.cpu_seconds = 0.0

    def measure(self, load: Callable[[str], LoadResult]) -> LoadResult:
        """Run `load(server_url)` and count the server's CPU time meanwhile."""
        before = self.server.cpu_seconds()
        result = load(self.server.url)
        self.cpu_seconds += self.server.cpu_seconds() - before
        self.windows.append(result)
        return result

    @property
    def combined(self) -> LoadResult:
        return LoadResult.combine(self.windows)

    @property
    def cpu_ms_per_answer(self) -> float:
        """Every answer counts, warm-up included: the CPU was spent on all of them."""
        return 1000 * self.cpu_seconds / max(sum(w.answered for w in self.windows), 1)


def alternate(costs: list[ServerCost], rounds: int, load: Callable[[str], LoadResult]) -> None:
    """`rounds` windows of `load` per server, alternated and each first in turn, so that the load
    other users put on the machine hits every server alike."""
    for n in range(rounds):
        for cost in costs[n % len(costs):] + costs[:n % len(costs)]:
            cost.measure(load)


def percentile(ordered: tuple[float, ...], fraction: float) -> float:
    """Nearest-rank percentile of already sorted values (0 when there are none)."""
    if not ordered:
        return 0.0
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def run_load(
    url: str, *, connections: int = 32, duration: float = 5.0, warmup: float = 1.0, processes: int = 2,
    headers: dict[str, str] | None = None,
) -> LoadResult:
    """GET `url` over `connections` keep-alive connections for `duration` seconds after `warmup`,
    each request carrying `headers` (a session cookie, for instance)."""
    where = urlsplit(url)
    path = where.path or "/"
    target = (where.hostname or "127.0.0.1", where.port or 80, f"{path}?{where.query}" if where.query else path)
    processes = max(1, min(processes, connections))
    shares = [connections // processes + (i < connections % processes) for i in range(processes)]
    start_at = time.time() + _SPAWN_MARGIN_SECONDS + warmup
    end_at = start_at + duration
    context = multiprocessing.get_context("spawn")
    with context.Pool(processes) as pool:
        parts = pool.starmap(
            _client_process, [(*target, share, start_at, end_at, dict(headers or {})) for share in shares]
        )
    total = _Tally()
    for part in parts:
        total.add(part)
    return LoadResult(
        requests=len(total.latencies),
        seconds=duration,
        non_2xx=total.non_2xx,
        errors=total.errors,
        answered=total.answered,
        latencies_ms=tuple(sorted(total.latencies)),
    )


@dataclass
class _Tally:
    """What one connection (or one client process, summed) saw."""

    latencies: list[float] = field(default_factory=list)  # ms, measured window only
    non_2xx: int = 0
    errors: int = 0
    answered: int = 0

    def add(self, other: _Tally) -> None:
        self.latencies.extend(other.latencies)
        self.non_2xx += other.non_2xx
        self.errors += other.errors
        self.answered += other.answered


def _client_process(
    host: str, port: int, path: str, connections: int, start_at: float, end_at: float, headers: dict[str, str]
) -> _Tally:
    """One client process: a thread per connection, their tallies summed."""
    tallies = [_Tally() for _ in range(connections)]
    threads = [
        threading.Thread(target=_connection_loop, args=(tally, host, port, path, start_at, end_at, headers))
        for tally in tallies
    ]
    for thread in threads:
        thread.start()
    total = _Tally()
    for thread, tally in zip(threads, tallies, strict=True):
        thread.join()
        total.add(tally)
    return total


def _connection_loop(
    tally: _Tally, host: str, port: int, path: str, start_at: float, end_at: float, headers: dict[str, str]
) -> None:
    conn = http.client.HTTPConnection(host, port, timeout=10)
    while (now := time.time()) < end_at:
        measured = now >= start_at
        began = time.perf_counter()
        try:
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            response.read()
        except (OSError, http.client.HTTPException):
            # A dropped keep-alive connection is counted, then replaced, as a real client would.
            tally.errors += measured
            conn.close()
            conn = http.client.HTTPConnection(host, port, timeout=10)
            continue
        tally.answered += 1
        if measured:
            tally.latencies.append((time.perf_counter() - began) * 1000)
            tally.non_2xx += not 200 <= response.status < 300
    conn.close()


@dataclass(frozen=True)
class PlannedRequest:
    """One request of a plan: its own method, path, body and headers."""

    method: str
    path: str
    body: bytes | None = None
    headers: tuple[tuple[str, str], ...] = ()


def run_plan(base_url: str, plan: list[PlannedRequest], *, connections: int = 32, processes: int = 2) -> LoadResult:
    """Send every request of `plan` once over `connections` keep-alive connections (connection i
    sends `plan[i::connections]` back to back, all starting together); `seconds` is the time from
    the common start to the last answer, so `throughput` is the plan's rate."""
    where = urlsplit(base_url)
    host, port = where.hostname or "127.0.0.1", where.port or 80
    connections = max(1, min(connections, len(plan)))
    processes = max(1, min(processes, connections))
    start_at = time.time() + _SPAWN_MARGIN_SECONDS
    lanes = [plan[i::connections] for i in range(connections)]
    groups = [lanes[i::processes] for i in range(processes)]
    context = multiprocessing.get_context("spawn")
    with context.Pool(processes) as pool:
        parts = pool.starmap(_plan_process, [(host, port, group, start_at) for group in groups])
    total = _Tally()
    for tally, _ in parts:
        total.add(tally)
    return LoadResult(
        requests=len(total.latencies),
        seconds=max(finished for _, finished in parts) - start_at,
        non_2xx=total.non_2xx,
        errors=total.errors,
        answered=total.answered,
        latencies_ms=tuple(sorted(total.latencies)),
    )


def _plan_process(host: str, port: int, lanes: list[list[PlannedRequest]], start_at: float) -> tuple[_Tally, float]:
    """One client process: a thread per lane; the tallies summed, and when the last answer came."""
    tallies = [_Tally() for _ in lanes]
    threads = [threading.Thread(target=_plan_loop, args=(tally, host, port, lane, start_at))
               for tally, lane in zip(tallies, lanes, strict=True)]
    for thread in threads:
        thread.start()
    total = _Tally()
    for thread, tally in zip(threads, tallies, strict=True):
        thread.join()
        total.add(tally)
    return total, time.time()


def _plan_loop(tally: _Tally, host: str, port: int, lane: list[PlannedRequest], start_at: float) -> None:
    conn = http.client.HTTPConnection(host, port, timeout=30)
    time.sleep(max(0.0, start_at - time.time()))
    for planned in lane:
        began = time.perf_counter()
        try:
            conn.request(planned.method, planned.path, body=planned.body, headers=dict(planned.headers))
            response = conn.getresponse()
            response.read()
        except (OSError, http.client.HTTPException):
            # Counted and not resent (a plan's request may not be idempotent); a new connection follows.
            tally.errors += 1
            conn.close()
            conn = http.client.HTTPConnection(host, port, timeout=30)
            continue
        tally.answered += 1
        tally.latencies.append((time.perf_counter() - began) * 1000)
        tally.non_2xx += not 200 <= response.status < 300
    conn.close()
