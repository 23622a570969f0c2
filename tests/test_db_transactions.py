"""Transactions begin lazily (`backend.db`): the `BEGIN` goes with the transaction's first
statement, whatever sends it, and a transaction that sends nothing sends nothing at all."""

from __future__ import annotations

import os

import psycopg2
import pytest
from peewee import ProgrammingError
from psycopg2.extensions import TRANSACTION_STATUS_IDLE, TRANSACTION_STATUS_INTRANS
from psycopg2.extras import execute_values

from backend import db
from backend.database_roles import current_role
from backend.db import database, transaction

pytestmark = pytest.mark.committed  # outermost transactions, not savepoints of the test's own


@pytest.fixture
def sent(monkeypatch):
    """The statements the connection sends, as sent (after the values are bound)."""
    queries: list[str] = []
    execute = db._Cursor.execute

    def recording(cursor, query, vars=None):
        try:
            return execute(cursor, query, vars)
        finally:
            if cursor.query is not None:
                queries.append(cursor.query.decode())

    monkeypatch.setattr(db._Cursor, "execute", recording)
    return queries


@pytest.fixture
def table():
    """A table of the test's own, made and dropped by the owner (the runtime role creates no
    table, temporary ones included)."""
    role = current_role(os.environ["DATABASE_URL"])
    _as_owner("CREATE TABLE lazy_begin (n integer)", f'GRANT ALL ON lazy_begin TO "{role}"')
    try:
        with database.connection_context():
            yield "lazy_begin"
    finally:
        _as_owner("DROP TABLE lazy_begin")


def _as_owner(*statements: str) -> None:
    with psycopg2.connect(os.environ["DATABASE_OWNER_URL"]) as owner, owner.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
    owner.close()


def _rows() -> list[int]:
    return [n for (n,) in database.execute_sql("SELECT n FROM lazy_begin ORDER BY n").fetchall()]


def test_the_begin_goes_with_the_first_statement_and_the_commit_alone(table, sent):
    with transaction():
        assert database.connection().info.transaction_status == TRANSACTION_STATUS_IDLE  # nothing sent yet
        first = database.execute_sql("SELECT now()").fetchone()[0]
        assert database.connection().info.transaction_status == TRANSACTION_STATUS_INTRANS
        database.execute_sql("INSERT INTO lazy_begin VALUES (%s)", (1,))
        assert database.execute_sql("SELECT now()").fetchone()[0] == first  # one transaction
    assert sent == ["BEGIN;SELECT now()", "INSERT INTO lazy_begin VALUES (1)", "SELECT now()", "COMMIT"]
    assert _rows() == [1]


def test_a_transaction_that_sends_nothing_sends_no_begin_and_no_commit(table, sent):
    hooks = []
    with transaction():
        db.on_commit(lambda: hooks.append("ran"))
    with pytest.raises(ZeroDivisionError), transaction():
        raise ZeroDivisionError
    assert sent == [] and hooks == ["ran"]
    assert database.connection().begin_pending is False
    database.execute_sql("INSERT INTO lazy_begin VALUES (1)")  # autocommit again: no BEGIN carried
    assert database.connection().info.transaction_status == TRANSACTION_STATUS_IDLE
    assert sent == ["INSERT INTO lazy_begin VALUES (1)"]


def test_a_rollback_undoes_what_every_kind_of_cursor_sent(table):
    with pytest.raises(ZeroDivisionError), transaction():
        raw = database.cursor()  # a raw cursor as the first statement
        raw.execute("INSERT INTO lazy_begin VALUES (1)")
        raise ZeroDivisionError
    with pytest.raises(ZeroDivisionError), transaction():
        execute_values(database.cursor(), b"INSERT INTO lazy_begin VALUES %s", [(2,), (3,)])  # bytes
        raise ZeroDivisionError
    with pytest.raises(ZeroDivisionError), transaction():
        database.cursor().executemany("INSERT INTO lazy_begin VALUES (%s)", [(4,), (5,)])  # BEGIN sent alone
        raise ZeroDivisionError
    assert _rows() == []


def test_a_savepoint_as_the_first_statement_and_its_rollback(table):
    with transaction():
        with pytest.raises(ZeroDivisionError), transaction():  # SAVEPOINT: refused outside a transaction block
            database.execute_sql("INSERT INTO lazy_begin VALUES (1)")
            raise ZeroDivisionError
        database.execute_sql("INSERT INTO lazy_begin VALUES (2)")
    assert _rows() == [2]


def test_a_statement_never_sent_leaves_the_begin_pending(table):
    with pytest.raises(ZeroDivisionError), transaction():
        with pytest.raises(ProgrammingError):  # psycopg2 cannot adapt the value: nothing is sent
            database.execute_sql("INSERT INTO lazy_begin VALUES (%s)", (object(),))
        assert database.connection().begin_pending is True
        database.execute_sql("INSERT INTO lazy_begin VALUES (1)")  # carries the BEGIN
        raise ZeroDivisionError
    assert _rows() == []


def test_a_failing_first_statement_rolls_back_and_the_connection_is_usable(table, sent):
    with pytest.raises(ProgrammingError), transaction():
        database.execute_sql("SELECT * FROM no_such_table")
    assert sent == ["BEGIN;SELECT * FROM no_such_table", "ROLLBACK"]
    assert database.connection().info.transaction_status == TRANSACTION_STATUS_IDLE
    with transaction():
        database.execute_sql("INSERT INTO lazy_begin VALUES (1)")
    assert _rows() == [1]


def test_commit_with_as_the_only_statement_carries_begin_and_commit(table, sent):
    with transaction():
        cursor = db.commit_with("INSERT INTO lazy_begin VALUES (1)", then="SELECT count(*) FROM lazy_begin")
        assert cursor.fetchone() == (1,)
    assert sent == ["BEGIN;INSERT INTO lazy_begin VALUES (1); COMMIT; SELECT count(*) FROM lazy_begin"]
    assert database.connection().info.transaction_status == TRANSACTION_STATUS_IDLE
