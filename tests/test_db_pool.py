"""The connection pool hands out only live connections, whatever PostgreSQL did meanwhile."""

from __future__ import annotations

import psycopg2
import pytest


@pytest.mark.committed
def test_a_pooled_connection_postgresql_dropped_is_replaced_at_check_out(config, monkeypatch):
    """Connections given back more than `PING_AFTER_SECONDS` ago are checked with a round trip at
    check-out: one whose server process was terminated while it sat in the pool is discarded."""
    from backend.db import close_connection, database, open_connection

    pool = database.obj
    for _ in range(3):  # at least one connection in the pool
        open_connection()
        database.execute_sql("SELECT 1")
        close_connection()
    pids = [conn.info.backend_pid for _, _, conn in pool._connections]
    assert pids
    with psycopg2.connect(config.database_url) as admin, admin.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) AS pid", (pids,))
    monkeypatch.setattr(type(pool), "PING_AFTER_SECONDS", 0.0)  # as if they sat there a while
    for _ in range(len(pids) + 1):
        open_connection()
        try:
            assert database.execute_sql("SELECT pg_backend_pid()").fetchone()[0] not in pids
        finally:
            close_connection()
