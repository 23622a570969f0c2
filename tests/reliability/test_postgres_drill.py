"""PostgreSQL restarted under load (marker `drills`): a PostgreSQL of the drill's own (the
session's server is shared by the parallel test sessions), migrated, behind the app in-process.

Readers (signed-in `GET /api/auth/session`) and a writer (signed e-signature webhooks, each with
its own `event_id`, sent again after a 503 as a provider does) run while PostgreSQL stops and
starts again. While it is away every answer is 503 `SERVICE_UNAVAILABLE`, never a 500; once it is
back the app answers again within the bound without a restart; every event is stored exactly once.
"""

from __future__ import annotations

import shutil
import threading
import time
import uuid
from pathlib import Path

import pytest

from backend import embedded
from backend.db import database, init_database
from backend.migrate import apply_migrations
from backend.onboarding.models import SignatureEvent
from tests.factories import make_user, session_cookie
from tests.onboarding.conftest import event_body, signed_headers
from tests.reliability.drill import books_hold

pytestmark = [pytest.mark.drills, pytest.mark.committed]
ROOT = Path(__file__).resolve().parents[2]
RECOVERY_BOUND_S = 15  # from PostgreSQL accepting connections again to the app's first 200


@pytest.fixture
def own_postgres():
    """(data_dir, url) of a PostgreSQL of this drill's own; the session's database afterwards."""
    data_dir = ROOT / "var" / "test" / f"drill-pg-{uuid.uuid4().hex[:8]}"
    url = embedded.ensure_postgres(data_dir, "drill")
    session_db = database.obj
    pool = init_database(url, max_connections=16)
    try:
        with database.connection_context():
            apply_migrations()
        yield data_dir, url
    finally:
        pool.close_all()
        database.initialize(session_db)
        embedded.stop_postgres(data_dir)
        shutil.rmtree(data_dir, ignore_errors=True)


def _wait_for(condition, timeout: float) -> float:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, "no recovery within the bound"
        time.sleep(0.05)
    return time.monotonic() - started


def test_postgresql_restarted_under_load_answers_503_and_loses_nothing(own_postgres, client):
    data_dir, _ = own_postgres
    with database.connection_context():
        user = make_user()
        cookie = {"Cookie": f"auth.session_token={session_cookie(user)}"}
    answers: list[tuple[float, int, str | None]] = []
    lock = threading.Lock()
    stop = threading.Event()
    pending = [f"evt-pg-drill-{i}" for i in range(60)]
    acknowledged: set[str] = set()

    def record(answer) -> None:
        code = (answer.json or {}).get("error", {}).get("code") if answer.status_code >= 400 else None
        with lock:
            answers.append((time.monotonic(), answer.status_code, code))

    def read() -> None:
        while not stop.is_set():
            record(client.simulate_get("/api/auth/session", headers=cookie))

    def write() -> None:
        # One new event at a time; a 503 is sent again (the provider retries), a 200 acknowledges.
        queue = list(pending)
        while queue and not stop.is_set():
            event_id = queue[0]
            body = event_body("signer.link_opened", f"prov-{event_id}", event_id=event_id)
            answer = client.simulate_post("/api/webhooks/esign", body=body, headers=signed_headers(body))
            record(answer)
            if answer.status_code == 200:
                acknowledged.add(queue.pop(0))
            else:
                time.sleep(0.05)  # the provider's back-off, shortened

    threads = [threading.Thread(target=read) for _ in range(3)] + [threading.Thread(target=write)]
    for thread in threads:
        thread.start()
    try:
        _wait_for(lambda: len(acknowledged) >= 10, timeout=60)
        stopped_at = time.monotonic()
        embedded.stop_postgres(data_dir)  # pg_ctl stop -m fast: the pooled connections die
        # Down long enough for every thread to meet it many times (the readers loop without pause).
        _wait_for(lambda: sum(1 for t, status, _ in list(answers) if t > stopped_at and status == 503) >= 50,
                  timeout=30)
        embedded.postgres_server(data_dir)  # started again, same data
        restarted_at = time.monotonic()
        recovery = _wait_for(
            lambda: any(t > restarted_at and status == 200 for t, status, _ in list(answers)), timeout=RECOVERY_BOUND_S)
        _wait_for(lambda: len(acknowledged) == len(pending), timeout=60)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    down = [(status, code) for t, status, code in answers if stopped_at <= t <= restarted_at and status != 200]
    print(f"PostgreSQL drill: {len(answers)} answers, {len(down)} refused while down "
          f"({sum(1 for s, _ in down if s == 503)} 503), recovered {recovery:.2f} s after the restart")
    assert [status for _, status, _ in answers if status >= 500 and status != 503] == []
    assert {code for status, code in down} <= {"SERVICE_UNAVAILABLE"} and down
    with database.connection_context():
        stored = list(SignatureEvent.select(SignatureEvent.event_id).where(SignatureEvent.event_id.in_(pending)))
        books_hold(database)
    assert sorted(e.event_id for e in stored) == sorted(pending)  # each once: event_id is unique
