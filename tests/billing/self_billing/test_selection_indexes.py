"""The self-billing pass's selection (`scheduler.candidates`) is served by the indexes of migration
157, never by reading every reservation (its cost stays flat as the history grows: `vitrine bench
growth`, docs/performance.md). The planner is told to avoid sequential scans, as it
does by itself on a large table: the plan must then find an index for each side."""

import pytest

from backend.billing.self_billing import scheduler
from backend.db import database


def _plan(**settings) -> str:
    sql, params = scheduler.candidates_query().sql()
    for name, value in settings.items():
        database.execute_sql(f"SET LOCAL {name} = {value}")
    return "\n".join(row[0] for row in database.execute_sql("EXPLAIN " + sql, params).fetchall())


def test_the_ended_reservations_are_read_from_reservation_ends_at():
    plan = _plan(enable_seqscan="off", enable_bitmapscan="off")
    assert "Seq Scan on reservation" not in plan
    assert "reservation_ends_at" in plan or "billing_financial_record_settleable" in plan


@pytest.mark.parametrize("index", ["reservation_ends_at", "billing_financial_record_settleable"])
def test_each_index_of_the_selection_exists_and_is_valid(index):
    assert database.execute_sql("SELECT indisvalid FROM pg_index WHERE indexrelid = %s::regclass",
                                (index,)).fetchone() == (True,)
