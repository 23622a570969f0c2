"""Fixtures of the fault drills."""

from __future__ import annotations

import os

import psycopg2
import pytest
from psycopg2 import sql

from backend.database_roles import current_role
from backend.db import database
from tests.printing.conftest import group, member, printer, sent_batch, setting  # noqa: F401  (the batch drill's)


@pytest.fixture
def drill_table(broker):
    """The table `drill_work` records its runs in, empty: made by the owner for the runtime role
    (the drill's processes), which may not create tables."""
    # Imported here: this conftest is loaded before the session's broker exists, which an actor
    # declared at import needs.
    from tests.reliability.drill_actors import CREATE

    owner = psycopg2.connect(os.environ["DATABASE_OWNER_URL"])
    try:
        with owner, owner.cursor() as cursor:
            cursor.execute(CREATE)
            cursor.execute("TRUNCATE drill_work")
            cursor.execute(sql.SQL("GRANT SELECT, INSERT, UPDATE ON drill_work TO {}").format(
                sql.Identifier(current_role(os.environ["DATABASE_URL"]))))
        yield
    finally:
        with owner, owner.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS drill_work")
        owner.close()


@pytest.fixture
def epoch(broker):
    """The broker's epoch as a running platform has it: written in Redis and PostgreSQL (the
    committed tests before this one truncated the table)."""
    from actors.broker import check_epoch

    with database.connection_context():
        database.execute_sql("DELETE FROM outbox_broker_epoch")
        database.execute_sql("DELETE FROM outbox_broker_loss")
        broker.client.delete(f"{broker.namespace}:vitrine-epoch")
        check_epoch()
        assert database.execute_sql("SELECT count(*) FROM outbox_broker_epoch").fetchone()[0] == 1
        yield
