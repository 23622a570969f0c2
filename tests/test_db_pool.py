"""The connection pool hands out only live connections, whatever PostgreSQL did meanwhile."""

from __future__ import annotations

import psycopg2
import pytest


@pytest.mark.committed
def test_a_pooled_connection_postgresql_dropped_is_replaced_at_check_out(config):
    """peewee's pool checks a connection as it hands it out: one whose server process was
    terminated while it sat in the pool is discarded."""
    from backend.db import close_connection, database, open_connection

    pids = set()
    for _ in range(3):  # one connection, given back to the pool each time
        open_connection()
        pids.add(database.execute_sql("SELECT pg_backend_pid()").fetchone()[0])
        close_connection()
    with psycopg2.connect(config.database_url) as admin, admin.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) AS pid", (list(pids),))
    for _ in range(len(pids) + 1):
        open_connection()
        try:
            assert database.execute_sql("SELECT pg_backend_pid()").fetchone()[0] not in pids
        finally:
            close_connection()


@pytest.mark.committed
def test_a_connection_that_died_inside_a_transaction_is_dropped_and_the_next_one_works(config):
    """PostgreSQL restarted under an open transaction: closing refuses to pool the connection, and
    the thread's next connection is a live one."""
    from backend.db import close_connection, database, open_connection

    open_connection()
    atomic = database.atomic()
    atomic.__enter__()  # a transaction still open when the request ends (its block never exited)
    pid = database.execute_sql("SELECT pg_backend_pid()").fetchone()[0]
    with psycopg2.connect(config.database_url) as admin, admin.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", (pid,))
    close_connection()
    assert database.is_closed() and not database.in_transaction()
    open_connection()
    try:
        assert database.execute_sql("SELECT pg_backend_pid()").fetchone()[0] != pid
    finally:
        close_connection()
