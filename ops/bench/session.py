"""`vitrine bench session`: what a signed-in request costs, in process (WSGI, no network).

Three pairs, measured alternately so the shared machine's load hits both sides alike:

- an authenticated request, `GET /api/workspace/resolve` with a session cookie (the policy
  resolves the cookie: one SQL query for session, user and membership, then the workspace's
  organization), against `GET /api/health` of the same app (no session, no database);
- the session lookup alone (`resolve_session`) against a bare `SELECT 1` round trip;
- a whole sign-in (`POST /api/auth/sign-in`: Argon2id at the configured cost, the session row
  and the audit row) against the Argon2id verification alone at the same cost.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from ops.bench.report import Figure, Result

NAME = "session"
DESCRIPTION = ("signed-in request, session lookup and sign-in, in process; references: /api/health, "
               "SELECT 1, Argon2id verify alone")
PASSWORD = "bench-password-123"  # noqa: S105 (a throwaway account of the bench database)


def _p50_ms(action: Callable[[], object], times: int) -> float:
    samples = []
    for _ in range(times):
        began = time.perf_counter()
        action()
        samples.append((time.perf_counter() - began) * 1000)
    return statistics.median(samples)


def run(stack, quick: bool) -> Result:
    import falcon.testing

    from api.app import create_app
    from backend.db import database, transaction
    from backend.identity.models import Membership, Organization, User
    from backend.identity.secrets import hash_password, verify_password
    from backend.identity.sessions import open_session, resolve_session

    requests, sign_ins, rounds = (300, 6, 1) if quick else (2_000, 20, 3)
    client = falcon.testing.TestClient(create_app(stack.config))
    with database.connection_context():
        with transaction():
            user = User.create(email="bench-session@example.com", name="Bench", password_hash=hash_password(PASSWORD),
                               roles=["industrial"])
            Organization.create(id="industrial:552100554", actor_type="industrial", siren="552100554",
                                legal_name="Bench SA", kyb_status="approved")
            Membership.create(user=user.id, organization="industrial:552100554", role="manager")
            token = open_session(user, ttl_days=1)
        password_hash = user.password_hash
        headers = {"Cookie": f"auth.session_token={token}"}
        addresses = iter(f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}" for n in range(1, 10**7))

        def sign_in() -> None:  # a new address each time: sign-in is rate limited per IP
            answer = client.simulate_post("/api/auth/sign-in", remote_addr=next(addresses),
                                          json={"email": "bench-session@example.com", "password": PASSWORD})
            assert answer.status_code == 200, answer.text

        pairs = {
            "authenticated request p50 (ms)": (
                lambda: client.simulate_get("/api/workspace/resolve", params={"path": "/industrial"}, headers=headers),
                lambda: client.simulate_get("/api/health"), requests),
            "session lookup p50 (ms)": (
                lambda: resolve_session(token), lambda: database.execute_sql("SELECT 1").fetchone(), requests),
            "sign-in p50 (ms)": (
                sign_in, lambda: verify_password(password_hash, PASSWORD), sign_ins),
        }
        figures = []
        for label, (ours, reference, times) in pairs.items():
            ours(), reference()  # warm-up
            mine = [_p50_ms(ours, times) for _ in range(rounds)]
            theirs = [_p50_ms(reference, times) for _ in range(rounds)]
            figures.append(Figure(label, statistics.median(mine), statistics.median(theirs)))
        principal = resolve_session(token)
    config = stack.config
    return Result(
        title="cost of a session: per authenticated request and per sign-in",
        reference="GET /api/health (no session, no database); SELECT 1; Argon2id verify alone",
        settings=[
            "in process, falcon.testing client (no network), one PostgreSQL connection",
            f"Argon2id time_cost={config.argon2_time_cost}, memory_cost={config.argon2_memory_cost_kib} KiB, "
            f"parallelism={config.argon2_parallelism}",
            f"{requests} requests x {rounds} round(s) per side, {sign_ins} sign-ins x {rounds} round(s)",
        ],
        figures=figures,
        checks=[f"session resolved to the bench user: {principal is not None} (expected True)"],
        notes=["the sign-in ratio is its overhead beyond the password hash, which dominates by design"],
        ok=principal is not None,
    )
