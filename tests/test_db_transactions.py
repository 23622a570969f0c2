"""`backend.db.transaction()`: peewee's `atomic()` (a savepoint when nested) with after-commit hooks
that run once the outermost block committed, never for a rolled-back one."""

from __future__ import annotations

import os

import psycopg2
import pytest
from peewee import ProgrammingError
from psycopg2.extensions import TRANSACTION_STATUS_IDLE

from backend import db
from backend.database_roles import current_role
from backend.db import database, transaction

pytestmark = pytest.mark.committed  # outermost transactions, not savepoints of the test's own


@pytest.fixture
def table():
    """A table of the test's own, made and dropped by the owner (the runtime role creates no
    table, temporary ones included)."""
    role = current_role(os.environ["DATABASE_URL"])
    _as_owner("CREATE TABLE txn_rows (n integer)", f'GRANT ALL ON txn_rows TO "{role}"')
    try:
        with database.connection_context():
            yield "txn_rows"
    finally:
        _as_owner("DROP TABLE txn_rows")


def _as_owner(*statements: str) -> None:
    with psycopg2.connect(os.environ["DATABASE_OWNER_URL"]) as owner, owner.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
    owner.close()


def _rows() -> list[int]:
    return [n for (n,) in database.execute_sql("SELECT n FROM txn_rows ORDER BY n").fetchall()]


def test_one_transaction_commits_and_its_hooks_run_after(table):
    seen = []
    with transaction():
        first = database.execute_sql("SELECT now()").fetchone()[0]
        database.execute_sql("INSERT INTO txn_rows VALUES (1)")
        db.on_commit(lambda: seen.append(_rows()))
        assert database.execute_sql("SELECT now()").fetchone()[0] == first  # one transaction
        assert seen == []
    assert seen == [[1]]  # the hook saw the committed row
    assert not db.in_transaction()


def test_a_rollback_drops_rows_and_hooks(table):
    seen = []
    with pytest.raises(ZeroDivisionError), transaction():
        database.execute_sql("INSERT INTO txn_rows VALUES (1)")
        db.on_commit(lambda: seen.append("ran"))
        raise ZeroDivisionError
    assert _rows() == [] and seen == []


def test_a_nested_block_is_a_savepoint_whose_hooks_wait_for_the_outermost_commit(table):
    seen = []
    with transaction():
        with pytest.raises(ZeroDivisionError), transaction():
            database.execute_sql("INSERT INTO txn_rows VALUES (1)")
            db.on_commit(lambda: seen.append("rolled back"))
            raise ZeroDivisionError
        with transaction():
            database.execute_sql("INSERT INTO txn_rows VALUES (2)")
            db.on_commit(lambda: seen.append("kept"))
        assert seen == []  # released, not committed
    assert _rows() == [2] and seen == ["kept"]


def test_a_failing_statement_rolls_back_and_the_connection_is_usable(table):
    with pytest.raises(ProgrammingError), transaction():
        database.execute_sql("SELECT * FROM no_such_table")
    assert database.connection().info.transaction_status == TRANSACTION_STATUS_IDLE
    with transaction():
        database.execute_sql("INSERT INTO txn_rows VALUES (1)")
    assert _rows() == [1]


def test_on_commit_needs_a_transaction(table):
    with pytest.raises(RuntimeError):
        db.on_commit(lambda: None)
