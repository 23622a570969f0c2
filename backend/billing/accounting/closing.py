"""Closing a period of the books (`vitrine accounting close --until YYYY-MM-DD`).

Once closed, no entry dated on or before that day is accepted (migration 140's trigger); an event
happening later but belonging to the closed period posts on the first open day (`entries`). A
closing never goes back. The closing waits for the postings in flight (`LOCK TABLE ... IN SHARE
MODE`: until they commit or roll back), so none lands in the period just closed.
"""

from __future__ import annotations

from datetime import date

from peewee import DatabaseError

from backend import clock
from backend.billing.accounting.entries import paris_day
from backend.db import database, sqlstate, transaction
from backend.errors import Conflict

_CHECK_VIOLATION = "23514"


def closed_until() -> date | None:
    """The last closed day, None while nothing is closed."""
    return database.execute_sql("SELECT accounting_closed_until()").fetchone()[0]


def close_until(day: date, *, closed_by: str) -> date:
    """Close the books up to `day` included; 409 when they are already closed that far, or when
    `day` is not over yet in Paris (`period_not_over`): an event of today would then post on a
    first open day still to come, validated before the date it carries (a `ValidDate` before its
    `EcritureDate` in the FEC)."""
    today = paris_day(clock.now())
    if day >= today:
        raise Conflict(f"a period is closed once it is over: {day} is not over yet (today is {today})",
                       reason="period_not_over", today=today.isoformat())
    try:
        with transaction():
            database.execute_sql("SELECT accounting_lock_for_close()")  # migration 143
            database.execute_sql("INSERT INTO accounting_period_close (closed_until, closed_by) VALUES (%s, %s)",
                                 (day, closed_by))
    except DatabaseError as exc:
        if sqlstate(exc) != _CHECK_VIOLATION:
            raise
        raise Conflict(f"the books are already closed until {closed_until()}", reason="already_closed",
                       closedUntil=str(closed_until())) from None
    return day
