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
