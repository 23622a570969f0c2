"""Database: the peewee proxy, connection set-up, and `transaction()` with after-commit hooks.

One connection per request and per actor message: `api.middleware.DatabaseSession` and
`actors.middleware.DatabaseSession` open it and give it back to peewee's pool. Every multi-row
change runs in `transaction()` (peewee's `atomic()`: a transaction, a savepoint when nested);
work that must happen only once the change is durable (sending outbox rows to the broker) is
registered with `on_commit` and runs after the outermost block commits, never for a rolled-back
one.

Only plain statements are sent, each transaction opened with `BEGIN` and closed with `COMMIT`
or `ROLLBACK` by peewee, and no statement is prepared on the server: a pooler in transaction
mode (PgBouncer) may hand each transaction a different server connection.
"""

from __future__ import annotations

import csv
import io
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from peewee import DatabaseError, DatabaseProxy, InterfaceError, OperationalError
from playhouse.postgres_ext import PooledPostgresqlExtDatabase
from psycopg2 import sql

from backend.errors import ServiceUnavailable

database = DatabaseProxy()

_hooks = threading.local()


def init_database(url: str, *, max_connections: int = 20) -> PooledPostgresqlExtDatabase:
    """Point the proxy at PostgreSQL. `url` is any libpq connection string or URI. peewee's pool
    checks a connection as it hands it out and drops one the server closed."""
    db = PooledPostgresqlExtDatabase(
        url,  # libpq expands a URI given as dbname
        max_connections=max_connections,
        stale_timeout=300,
        timeout=10,
        register_hstore=False,
        connect_timeout=5,
        application_name="vitrine",
    )
    database.initialize(db)
    return db


def open_connection() -> bool:
    """Open this thread's connection if it is closed; True when this call opened it."""
    if not database.is_closed():
        return False
    try:
        database.connect()
    except (OperationalError, InterfaceError) as exc:
        raise ServiceUnavailable("the database is unreachable") from exc
    return True


def close_connection() -> None:
    """Give this thread's connection back to the pool. A connection that died inside a
    transaction (PostgreSQL restarted) cannot be given back: the transactions peewee still counts
    open are left, and the connection is closed instead of pooled, so that the next request of
    this thread connects again."""
    if database.is_closed():
        return
    try:
        database.close()
    except (OperationalError, InterfaceError):
        while database.in_transaction():
            database.pop_transaction()
        database.manual_close()


def _levels() -> list[list[Callable[[], None]]]:
    if not hasattr(_hooks, "levels"):
        _hooks.levels = []
    return _hooks.levels


@contextmanager
def transaction() -> Iterator[None]:
    """A transaction (a savepoint when nested); on_commit hooks run after the outermost commit."""
    levels = _levels()
    levels.append([])
    try:
        with database.atomic():
            yield
    except BaseException:
        levels.pop()
        raise
    hooks = levels.pop()
    if levels:
        levels[-1].extend(hooks)
        return
    for hook in hooks:
        hook()



# SQLSTATEs of a concurrent change that lost a race: deadlock_detected, serialization_failure,
# unique_violation. Run again, the losing change sees the winner's rows and decides on them.
CONCURRENCY_SQLSTATES = frozenset({"40P01", "40001", "23505"})


def sqlstate(exc: BaseException) -> str | None:
    """The PostgreSQL SQLSTATE behind a peewee error (peewee keeps the driver's error as its first
    argument and as the context), None for anything else."""
    if not isinstance(exc, DatabaseError):
        return None
    for candidate in (*exc.args[:1], exc.__cause__, exc.__context__):
        code = getattr(candidate, "pgcode", None)
        if code:
            return code
    return None


def is_concurrency_conflict(exc: BaseException) -> bool:
    """A deadlock, a serialization failure or a unique violation: a race another change won."""
    return sqlstate(exc) in CONCURRENCY_SQLSTATES



def in_transaction() -> bool:
    return bool(_levels())


def on_commit(hook: Callable[[], None]) -> None:
    """Run `hook` once the enclosing transaction commits (dropped if it rolls back)."""
    levels = _levels()
    if not levels:
        raise RuntimeError("on_commit needs an enclosing transaction()")
    levels[-1].append(hook)


def with_connection(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Iterate a response body that queries the database as it goes: the server reads a body after
    the request's connection went back to the pool, so the body opens (and gives back) its own."""
    opened = open_connection()
    try:
        yield from chunks
    finally:
        if opened:
            close_connection()


class _Null(float):
    """None as `copy_rows` writes it: under `QUOTE_NONNUMERIC` the csv module quotes every value but
    a number, and this number prints empty: an unquoted empty field, COPY's NULL, where an empty
    text is quoted (`""`) and stays an empty text."""

    __slots__ = ()

    def __str__(self) -> str:
        return ""


_NULL = _Null()


def copy_rows(table: str, columns: tuple[str, ...], rows: Iterable[tuple]) -> None:
    """Rows of plain values written by one `COPY ... FROM STDIN` (CSV): None is NULL, a text is
    quoted (an empty one stays empty), a number or a date as it prints, an array as its literal
    (`array_literal`). The way in for thousands of rows: no statement to parse or plan, and the
    encoding done by the csv module in C. Uses the driver's public `cursor.copy_expert`."""
    values = [[_NULL if value is None else value for value in row] for row in rows]
    if not values:
        return
    buffer = io.StringIO()
    csv.writer(buffer, quoting=csv.QUOTE_NONNUMERIC).writerows(values)
    buffer.seek(0)
    cursor = database.cursor()
    statement = sql.SQL("COPY {} ({}) FROM STDIN WITH (FORMAT csv)").format(
        sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns)))
    cursor.copy_expert(statement.as_string(cursor.connection), buffer, size=1 << 20)  # 1 MiB reads


def array_literal(values: Iterable[str]) -> str:
    """A text array's literal (`{"a","b"}`), as `copy_rows` writes an array."""
    quoted = ('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"' for value in values)
    return "{" + ",".join(quoted) + "}"
