"""`vitrine bench session`: what a signed-in request costs.

- On gunicorn (the production settings of `stack.serve`), the authenticated
  `GET /api/auth/session` (the policy resolves the cookie and the user's organizations in one
  statement; then the pending-envelope check of the workspace) against the same route of the
  bare reference app (`ops/bench/bare_app.py`: Falcon without middleware, psycopg2 running the
  same two statements by hand, the same JSON), on a second gunicorn with the same settings,
  with the same load client and rounds alternated. Throughput, latency and the server CPU per
  answer, as in `bench health`; a check compares the two answers.
- In process (no network): the session lookup alone (`resolve_session`) against a bare
  `SELECT 1` round trip, and a whole sign-in (`POST /api/auth/sign-in`: Argon2id at the
  configured cost, the session row and the audit row) against the Argon2id verification alone.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from functools import partial

from ops.bench.load import LoadResult, ServerCost, alternate, run_load
from ops.bench.report import SHARED_CORES_NOTE, Figure, Result

NAME = "session"
DESCRIPTION = ("authenticated GET /api/auth/session on gunicorn, session lookup and sign-in; references: "
               "a bare Falcon + psycopg2 app running the same SQL, SELECT 1, Argon2id verify alone")
PASSWORD = "bench-password-123"  # noqa: S105 (a throwaway account of the bench database)
EMAIL = "bench-session@example.com"
ORGANIZATION_ID = "industrial:552100554"
VITRINE_APP = "api.app:create_app()"
BARE_APP = "ops.bench.bare_app:create_app()"
ROUTE = "/api/auth/session"
CONNECTIONS = 32
CLIENT_PROCESSES = 2


def _p50_ms(action: Callable[[], object], times: int) -> float:
    samples = []
    for _ in range(times):
        began = time.perf_counter()
        action()
        samples.append((time.perf_counter() - began) * 1000)
    return statistics.median(samples)


def _bench_account() -> tuple[str, str]:
    """A KYB-approved industrial manager with an open session: (session token, password hash)."""
    from backend.db import transaction
    from backend.identity.models import Membership, Organization, User
    from backend.identity.secrets import hash_password
    from backend.identity.sessions import open_session

    with transaction():
        user = User.create(email=EMAIL, name="Bench", password_hash=hash_password(PASSWORD), roles=["industrial"])
        Organization.create(id=ORGANIZATION_ID, actor_type="industrial", siren="552100554", legal_name="Bench SA",
                            kyb_status="approved")
        Membership.create(user=user.id, organization=ORGANIZATION_ID, role="manager")
        return open_session(user, ttl_days=1), user.password_hash


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
    import falcon.testing

    from api.app import create_app
    from backend.db import database
    from backend.identity.secrets import verify_password
    from backend.identity.sessions import resolve_session

    lookups, sign_ins, rounds = (300, 6, 1) if quick else (1_000, 20, 3)
    with database.connection_context():
        token, password_hash = _bench_account()
    cookie = {"Cookie": f"auth.session_token={token}"}
    session_cost, bare_cost, same_answer = _on_gunicorn(stack, cookie, quick)
    session, bare = session_cost.combined, bare_cost.combined

    client = falcon.testing.TestClient(create_app(stack.config))
    addresses = iter(f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}" for n in range(1, 10**7))

    def sign_in() -> None:  # a new address each time: sign-in is rate limited per IP
        answer = client.simulate_post("/api/auth/sign-in", remote_addr=next(addresses),
                                      json={"email": EMAIL, "password": PASSWORD})
        assert answer.status_code == 200, answer.text

    with database.connection_context():
        pairs = {
            "session lookup p50 (ms)": (
                lambda: resolve_session(token), lambda: database.execute_sql("SELECT 1").fetchone(), lookups),
            "sign-in p50 (ms)": (sign_in, lambda: verify_password(password_hash, PASSWORD), sign_ins),
        }
        in_process = []
        for label, (ours, reference, times) in pairs.items():
            ours(), reference()  # warm-up
            mine = [_p50_ms(ours, times) for _ in range(rounds)]
            theirs = [_p50_ms(reference, times) for _ in range(rounds)]
            in_process.append(Figure(label, statistics.median(mine), statistics.median(theirs)))
        principal = resolve_session(token)
    config = stack.config
    server_rounds, seconds, warmup = _server_plan(quick)
    failures = session.non_2xx + session.errors + bare.non_2xx + bare.errors
    return Result(
        title=f"authenticated GET /api/auth/session, {CONNECTIONS} keep-alive connections",
        reference="the same route of a bare Falcon + psycopg2 app running the same SQL (ops/bench/bare_app.py); "
                  "SELECT 1; Argon2id verify alone",
        settings=[
            stack.web_settings,
            f"client: {CLIENT_PROCESSES} processes x {CONNECTIONS // CLIENT_PROCESSES} connections, closed loop, "
            f"{server_rounds} alternating round(s) of {seconds:g} s per app (each first in turn) after {warmup:g} s "
            "warm-up",
            "session lookup and sign-in: in process, falcon.testing client, one PostgreSQL connection, "
            f"{lookups} lookups and {sign_ins} sign-ins x {rounds} round(s) per side",
            f"Argon2id time_cost={config.argon2_time_cost}, memory_cost={config.argon2_memory_cost_kib} KiB, "
            f"parallelism={config.argon2_parallelism}",
        ],
        figures=[
            # First: the steadiest figure on a shared machine (see `bench health`).
            Figure("server CPU per answer (ms)", session_cost.cpu_ms_per_answer, bare_cost.cpu_ms_per_answer),
            Figure("throughput (req/s)", session.throughput, bare.throughput),
            Figure("latency p50 (ms)", session.p50_ms, bare.p50_ms),
            Figure("latency p99 (ms)", session.p99_ms, bare.p99_ms),
            Figure("requests measured", session.requests, bare.requests, summary=False),
            *in_process,
        ],
        checks=[
            f"non-2xx answers: {session.non_2xx} vitrine, {bare.non_2xx} bare (expected 0)",
            f"connection errors: {session.errors} vitrine, {bare.errors} bare (expected 0)",
            f"the bare app answered the same JSON as Vitrine: {same_answer} (expected True)",
            f"session resolved to the bench user: {principal is not None} (expected True)",
        ],
        notes=[
            SHARED_CORES_NOTE,
            "the sign-in ratio is its overhead beyond the password hash, which dominates by design",
        ],
        ok=failures == 0 and principal is not None and same_answer,
    )
