"""Fixtures of the fault drills."""

from __future__ import annotations

import pytest

from backend.db import database
from tests.printing.conftest import group, member, printer, sent_batch, setting  # noqa: F401  (the batch drill's)


@pytest.fixture
def drill_table(broker):
    """The table `drill_work` records its runs in, empty."""
    # Imported here: this conftest is loaded before the session's broker exists, which an actor
    # declared at import needs.
    from tests.reliability.drill_actors import CREATE

    with database.connection_context():
        database.execute_sql(CREATE)
        database.execute_sql("TRUNCATE drill_work")
        yield
        database.execute_sql("DROP TABLE IF EXISTS drill_work")


@pytest.fixture
def epoch(broker):
    """The broker's epoch as a running platform has it: written in Redis and PostgreSQL (the
    committed tests before this one truncated the table)."""
    from actors.broker import check_epoch

    with database.connection_context():
        database.execute_sql("TRUNCATE outbox_broker_epoch, outbox_broker_loss")
        broker.client.delete(f"{broker.namespace}:vitrine-epoch")
        check_epoch()
        assert database.execute_sql("SELECT count(*) FROM outbox_broker_epoch").fetchone()[0] == 1
        yield
