"""Prepared statements (`backend.prepared`): prepared once per connection, whatever the
transactions and the statement's own failures do."""

from __future__ import annotations

import pytest
from peewee import DataError

from backend import prepared
from backend.db import close_connection, database, open_connection, sqlstate, transaction


def _prepared_names() -> set[str]:
    return {name for (name,) in database.execute_sql("SELECT name FROM pg_prepared_statements").fetchall()}


def test_named_parameters_become_positional_and_repeat():
    statement = prepared.Statement("test_prepared_sum", "SELECT %(a)s::int + %(b)s::int + %(a)s::int, '100%%'")
    assert statement.parameters == ["a", "b"]
    assert statement.execute({"a": 1, "b": 10}).fetchone() == (12, "100%")
    assert statement.execute({"b": 20, "a": 2}).fetchone() == (24, "100%")
    assert "test_prepared_sum" in _prepared_names()


@pytest.mark.committed  # real transactions, not savepoints of the test's own
def test_a_rollback_keeps_the_statement_and_a_failing_run_leaves_it_usable():
    statement = prepared.Statement("test_prepared_div", "SELECT 10 / %(d)s::int")
    with pytest.raises(ZeroDivisionError), transaction():
        assert statement.execute({"d": 5}).fetchone() == (2,)  # prepared in a transaction rolled back
        raise ZeroDivisionError
    with pytest.raises(DataError) as failed, transaction():
        statement.execute({"d": 0})
    assert sqlstate(failed.value) == "22012"  # division_by_zero, from the EXECUTE
    assert statement.execute({"d": 2}).fetchone() == (5,)


@pytest.mark.committed
def test_a_new_connection_prepares_it_again():
    statement = prepared.Statement("test_prepared_pid", "SELECT pg_backend_pid(), %(x)s::text")
    first_pid, _ = statement.execute({"x": "a"}).fetchone()
    database.close_all()  # every pooled connection closed: the next one is new
    close_connection()
    open_connection()
    try:
        second_pid, value = statement.execute({"x": "b"}).fetchone()
    finally:
        close_connection()
    open_connection()
    assert second_pid != first_pid and value == "b"


def test_a_name_must_be_an_identifier():
    with pytest.raises(ValueError):
        prepared.Statement("drop table; --", "SELECT 1")


@pytest.mark.committed
def test_commit_with_commits_in_the_statements_round_trip_and_the_block_ends_quietly(config):
    import psycopg2

    from backend.db import on_commit

    statement = prepared.Statement("test_prepared_lock", "SELECT pg_advisory_xact_lock(%(id)s)")
    hooks = []
    with transaction():
        on_commit(lambda: hooks.append("ran"))
        read = prepared.Statement("test_prepared_after_commit", "SELECT now() = statement_timestamp(), %(id)s::int")
        # `then` runs after the COMMIT, in the same round trip: a transaction of its own.
        assert statement.execute_and_commit({"id": 4242}, then=read).fetchone() == (True, 4242)
        # Committed already: the transaction-level lock is released before the block ends.
        with psycopg2.connect(config.database_url) as other, other.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_xact_lock(4242)")
            assert cursor.fetchone() == (True,)
        notices = len(database.connection().notices)
    assert hooks == ["ran"]
    assert len(database.connection().notices) == notices  # no second COMMIT ("no transaction in progress")
    with transaction():  # the next transaction is an ordinary one
        assert statement.execute({"id": 4243}).fetchone() == ("",)


def test_commit_with_in_a_nested_block_only_runs_the_statement():
    from backend.db import commit_with

    with transaction():
        cursor = commit_with("SELECT pg_advisory_xact_lock(4244)", then="SELECT now() = statement_timestamp()")
        assert cursor.fetchone() == (False,)  # `then` runs in the enclosing transaction, still open
        assert database.execute_sql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
                                    " AND objid = 4244 AND pid = pg_backend_pid()").fetchone() == (1,)
