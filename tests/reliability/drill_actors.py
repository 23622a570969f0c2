"""The actor of the fault drills, declared in the test process and in the drill's worker process
(`dramatiq actors tests.reliability.drill_actors`). Idempotent like every actor: the row of a
token is written once whatever the deliveries; `runs` counts the executions (at least once)."""

from __future__ import annotations

import time

import dramatiq

from backend.db import database

TABLE = "drill_work"
CREATE = "CREATE TABLE IF NOT EXISTS drill_work (token text PRIMARY KEY, runs integer NOT NULL)"
RECORD = ("INSERT INTO drill_work (token, runs) VALUES (%s, 1)"
          " ON CONFLICT (token) DO UPDATE SET runs = drill_work.runs + 1")
DONE = "SELECT token, runs FROM drill_work"


@dramatiq.actor(queue_name="default", max_retries=5, time_limit=30_000, throws=())
def drill_work(token: str, delay_ms: int = 0) -> None:
    time.sleep(delay_ms / 1000)  # a job that takes a while, so a kill finds some in flight
    database.execute_sql(RECORD, (token,))
