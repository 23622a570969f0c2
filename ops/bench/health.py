"""`vitrine bench health`: `GET /api/health` through Vitrine's whole stack of middleware, against
a bare Falcon app answering the same JSON, both under the same gunicorn settings and client.

The goal is on the gunicorn processes' CPU time per answer against the bare app's
(`load.ServerCost`, as `bench session` and `bench webhook` measure theirs): the client competes
with the server for the same cores, which caps and blurs throughput and latency (shown, not
judged), while CPU per answer is the server's own cost and hardly moves with the machine's other
load.
"""

from __future__ import annotations

from functools import partial

from ops.bench.load import LoadResult, ServerCost, alternate, run_load
from ops.bench.report import SHARED_CORES_NOTE, Figure, Result

NAME = "health"
DESCRIPTION = "GET /api/health at 32 connections on gunicorn; reference: bare Falcon, same JSON"
CONNECTIONS = 32
CLIENT_PROCESSES = 2
VITRINE_APP = "api.app:create_app()"
BARE_APP = "ops.bench.bare_app:create_app()"


def run(stack, quick: bool) -> Result:
    rounds, seconds, warmup = (1, 2.0, 0.5) if quick else (3, 5.0, 1.0)
    load = partial(_health_load, connections=CONNECTIONS, duration=seconds, warmup=warmup,
                   processes=CLIENT_PROCESSES)
    with stack.serve(VITRINE_APP, "web") as vitrine, stack.serve(BARE_APP, "bare") as bare:
        costs = ServerCost(vitrine), ServerCost(bare)
        alternate(list(costs), rounds, load)
    ours, ref = (cost.combined for cost in costs)
    failures = ours.non_2xx + ours.errors + ref.non_2xx + ref.errors
    return Result(
        title=f"GET /api/health, {CONNECTIONS} keep-alive connections",
        reference="bare Falcon app (ops/bench/bare_app.py): one resource, the same JSON, no middleware",
        settings=[
            stack.web_settings,
            f"client: {CLIENT_PROCESSES} processes x {CONNECTIONS // CLIENT_PROCESSES} connections, closed loop, "
            f"{rounds} alternating round(s) of {seconds:g} s per app (each first in turn) after {warmup:g} s warm-up",
        ],
        figures=[
            # First: the steadiest figure on a shared machine (see the module's docstring).
            Figure("server CPU per answer (ms)", costs[0].cpu_ms_per_answer, costs[1].cpu_ms_per_answer),
            Figure("throughput (req/s)", ours.throughput, ref.throughput),
            Figure("latency p50 (ms)", ours.p50_ms, ref.p50_ms),
            Figure("latency p99 (ms)", ours.p99_ms, ref.p99_ms),
            Figure("requests measured", ours.requests, ref.requests, summary=False),
        ],
        checks=[
            f"non-2xx answers: {ours.non_2xx} vitrine, {ref.non_2xx} reference (expected 0)",
            f"connection errors: {ours.errors} vitrine, {ref.errors} reference (expected 0)",
        ],
        notes=[SHARED_CORES_NOTE],
        ok=failures == 0,
    )


def _health_load(url: str, **settings) -> LoadResult:
    return run_load(url + "/api/health", **settings)
