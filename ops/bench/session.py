"""`vitrine bench session`: what a signed-in request costs.

On gunicorn (the production settings of `stack.serve`), the authenticated `GET /api/auth/session`
(the policy resolves the cookie and the user's organizations in one statement; then the
pending-envelope check of the workspace) against the same route of the bare reference app
(`ops/bench/bare_app.py`: Falcon without middleware, psycopg2 running the same two statements by
hand, the same JSON), on a second gunicorn with the same settings, with the same load client and
rounds alternated. Throughput, latency and the server CPU per answer, as in `bench health`; a
check compares the two answers.
"""

from __future__ import annotations

from functools import partial

from ops.bench.load import LoadResult, ServerCost, alternate, run_load
from ops.bench.report import SHARED_CORES_NOTE, Figure, Result

NAME = "session"
DESCRIPTION = ("authenticated GET /api/auth/session at 32 connections on gunicorn; reference: a bare Falcon + "
               "psycopg2 app running the same SQL")
PASSWORD = "bench-password-123"  # noqa: S105 (a throwaway account of the bench database)
EMAIL = "bench-session@example.com"
ORGANIZATION_ID = "industrial:552100554"
VITRINE_APP = "api.app:create_app()"
BARE_APP = "ops.bench.bare_app:create_app()"
ROUTE = "/api/auth/session"
CONNECTIONS = 32
CLIENT_PROCESSES = 2


def _bench_account() -> tuple[str, str]:
    """A KYB-approved industrial manager with an open session: its token."""
    from backend.db import transaction
    from backend.identity.models import Membership, Organization, User
    from backend.identity.secrets import hash_password
    from backend.identity.sessions import open_session

    with transaction():
        user = User.create(email=EMAIL, name="Bench", password_hash=hash_password(PASSWORD), roles=["industrial"])
        Organization.create(id=ORGANIZATION_ID, actor_type="industrial", siren="552100554", legal_name="Bench SA",
                            kyb_status="approved")
        Membership.create(user=user.id, organization=ORGANIZATION_ID, role="manager")
        return open_session(user, ttl_days=1)


def _server_plan(quick: bool) -> tuple[int, float, float]:
    """Rounds per route, seconds measured per round, warm-up seconds."""
    return (1, 2.0, 0.5) if quick else (2, 4.0, 1.0)


def _on_gunicorn(stack, cookie: dict[str, str], quick: bool) -> tuple[ServerCost, ServerCost, bool]:
    """Vitrine's and the bare app's windows and CPU, alternated; whether both answered the same JSON."""
    import requests

    rounds, seconds, warmup = _server_plan(quick)
    load = partial(_session_load, connections=CONNECTIONS, duration=seconds, warmup=warmup,
                   processes=CLIENT_PROCESSES, headers=cookie)
    with stack.serve(VITRINE_APP, "web") as vitrine, stack.serve(BARE_APP, "bare") as bare:
        answers = [requests.get(server.url + ROUTE, headers=cookie, timeout=10).json() for server in (vitrine, bare)]
        costs = ServerCost(vitrine), ServerCost(bare)
        alternate(list(costs), rounds, load)
    return *costs, answers[0] == answers[1]


def _session_load(url: str, **settings) -> LoadResult:
    return run_load(url + ROUTE, **settings)


def run(stack, quick: bool) -> Result:
    from backend.db import database
    from backend.identity.sessions import resolve_session

    with database.connection_context():
        token = _bench_account()
        principal = resolve_session(token)
    cookie = {"Cookie": f"auth.session_token={token}"}
    session_cost, bare_cost, same_answer = _on_gunicorn(stack, cookie, quick)
    session, bare = session_cost.combined, bare_cost.combined
    server_rounds, seconds, warmup = _server_plan(quick)
    failures = session.non_2xx + session.errors + bare.non_2xx + bare.errors
    return Result(
        title=f"authenticated GET /api/auth/session, {CONNECTIONS} keep-alive connections",
        reference="the same route of a bare Falcon + psycopg2 app running the same SQL (ops/bench/bare_app.py)",
        settings=[
            stack.web_settings,
            f"client: {CLIENT_PROCESSES} processes x {CONNECTIONS // CLIENT_PROCESSES} connections, closed loop, "
            f"{server_rounds} alternating round(s) of {seconds:g} s per app (each first in turn) after {warmup:g} s "
            "warm-up",
        ],
        figures=[
            # First: the steadiest figure on a shared machine (see `bench health`).
            Figure("server CPU per answer (ms)", session_cost.cpu_ms_per_answer, bare_cost.cpu_ms_per_answer),
            Figure("throughput (req/s)", session.throughput, bare.throughput),
            Figure("latency p50 (ms)", session.p50_ms, bare.p50_ms),
            Figure("latency p99 (ms)", session.p99_ms, bare.p99_ms),
            Figure("requests measured", session.requests, bare.requests, summary=False),
        ],
        checks=[
            f"non-2xx answers: {session.non_2xx} vitrine, {bare.non_2xx} bare (expected 0)",
            f"connection errors: {session.errors} vitrine, {bare.errors} bare (expected 0)",
            f"the bare app answered the same JSON as Vitrine: {same_answer} (expected True)",
            f"session resolved to the bench user: {principal is not None} (expected True)",
        ],
        notes=[SHARED_CORES_NOTE],
        ok=failures == 0 and principal is not None and same_answer,
    )
