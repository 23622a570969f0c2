"""Database: the peewee proxy, connection set-up, and `transaction()` with after-commit hooks.

One connection per request and per actor message: `api.middleware.DatabaseSession` and
`actors.middleware.DatabaseSession` open it and give it back to the pool. Every multi-row change
runs in `transaction()`; work that must happen only once the change is durable (sending outbox
rows to the broker) is registered with `on_commit` and runs after the outermost block commits,
never for a rolled-back one.

Transactions begin lazily (`_Connection`): the `BEGIN` is sent with the transaction's first
statement, in its round trip, and a transaction that sends nothing sends neither `BEGIN` nor
`COMMIT`. `commit_with` sends the transaction's last statement with its `COMMIT`.
"""

from __future__ import annotations

import csv
import io
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from peewee import DatabaseError, DatabaseProxy, InterfaceError, OperationalError
from playhouse.postgres_ext import PooledPostgresqlExtDatabase
from psycopg2 import sql
from psycopg2.extensions import TRANSACTION_STATUS_IDLE
from psycopg2.extensions import connection as _PsycopgConnection
from psycopg2.extensions import cursor as _PsycopgCursor

from backend.errors import ServiceUnavailable

database = DatabaseProxy()

_state = threading.local()


class _Connection(_PsycopgConnection):
    """A psycopg2 connection (autocommit, as peewee runs it) whose transactions begin lazily: the
    pool's `begin()` only marks the `BEGIN` pending (`begin_pending`), and the connection's next
    statement carries it (`BEGIN;` and the statement, in one round trip), whatever sends it:
    peewee, a raw `database.cursor()`. A transaction that sends nothing sends
    no `BEGIN` and no `COMMIT` either. What cannot carry it (a named cursor, `executemany`, a
    `COPY`, `callproc`, an `sql.Composed` statement) sends it alone first."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.cursor_factory = _Cursor
        self.begin_pending = False
        self.prepared: set = set()  # the `backend.prepared.Statement`s prepared on this connection

    def send_pending_begin(self) -> None:
        if self.begin_pending:
            with _PsycopgCursor(self) as cursor:
                cursor.execute("BEGIN")
            self.begin_pending = False


class _Cursor(_PsycopgCursor):
    def execute(self, query, vars=None):
        connection = self.connection
        if not connection.begin_pending:
            return super().execute(query, vars)
        if self.name is not None or not isinstance(query, str | bytes):
            connection.send_pending_begin()
            return super().execute(query, vars)
        try:
            result = super().execute(("BEGIN;" if isinstance(query, str) else b"BEGIN;") + query, vars)
        except BaseException:
            # Sent (the transaction began, and failed or ended): the BEGIN is spent; not sent (the
            # values could not be adapted, the connection is gone), it still waits.
            if connection.info.transaction_status != TRANSACTION_STATUS_IDLE:
                connection.begin_pending = False
            raise
        connection.begin_pending = False
        return result

    def executemany(self, query, vars_list):
        self.connection.send_pending_begin()
        return super().executemany(query, vars_list)

    def callproc(self, procname, parameters=None):
        self.connection.send_pending_begin()
        return super().callproc(procname, parameters)

    def copy_from(self, *args, **kwargs):
        self.connection.send_pending_begin()
        return super().copy_from(*args, **kwargs)

    def copy_to(self, *args, **kwargs):
        self.connection.send_pending_begin()
        return super().copy_to(*args, **kwargs)

    def copy_expert(self, *args, **kwargs):
        self.connection.send_pending_begin()
        return super().copy_expert(*args, **kwargs)


class _Pool(PooledPostgresqlExtDatabase):
    """peewee's pool, which checks a connection out with a `SELECT 1` round trip (a connection
    PostgreSQL dropped while it sat in the pool is discarded). A connection given back less than
    `PING_AFTER_SECONDS` ago is handed out without it: at one request after another that ping was
    a round trip per request, and a server that went away within the last second fails that
    request as it fails those in flight."""

    PING_AFTER_SECONDS = 1.0

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._given_back: dict[int, float] = {}  # connection key -> monotonic time of its check-in

    def _is_closed(self, conn) -> bool:  # under the pool's lock
        given_back = self._given_back.pop(self.conn_key(conn), None)
        if conn.closed:
            return True
        recent = given_back is not None and time.monotonic() - given_back < self.PING_AFTER_SECONDS
        if recent and conn.info.transaction_status == TRANSACTION_STATUS_IDLE:
            return False
        return super()._is_closed(conn)

    def _close(self, conn, close_conn: bool = False) -> None:
        conn.begin_pending = False  # a transaction that sent nothing has nothing to end
        if not close_conn:
            self._given_back[self.conn_key(conn)] = time.monotonic()
        super()._close(conn, close_conn)

    def _close_raw(self, conn) -> None:
        self._given_back.pop(self.conn_key(conn), None)
        super()._close_raw(conn)

    def begin(self, isolation_level=None) -> None:
        """Mark the `BEGIN` pending: the transaction's first statement carries it (`_Connection`)."""
        if isolation_level is not None or self._isolation_level:
            super().begin(isolation_level)
            return
        self.connection().begin_pending = True

    def commit(self) -> None:
        if not self._nothing_to_end():
            super().commit()

    def rollback(self) -> None:
        if not self._nothing_to_end():
            super().rollback()

    def _nothing_to_end(self) -> bool:
        """True when no `COMMIT` or `ROLLBACK` is due: `commit_with`'s statement committed the
        transaction already, or the transaction sent no statement (its pending `BEGIN` dropped)."""
        if getattr(_state, "committed", False):
            _state.committed = False
            return True
        return self._begin_was_not_sent()

    def _begin_was_not_sent(self) -> bool:
        """True (and the pending `BEGIN` dropped) when the transaction sent no statement."""
        conn = None if self.is_closed() else self._state.conn
        if conn is None or not conn.begin_pending:
            return False
        conn.begin_pending = False
        return True


def init_database(url: str, *, max_connections: int = 20) -> PooledPostgresqlExtDatabase:
    """Point the proxy at PostgreSQL. `url` is any libpq connection string or URI."""
    db = _Pool(
        url,  # libpq expands a URI given as dbname
        max_connections=max_connections,
        stale_timeout=300,
        timeout=10,
        register_hstore=False,
        connect_timeout=5,
        application_name="vitrine",
        connection_factory=_Connection,
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
    if database.is_closed():
        return
    try:
        database.close()
    except (OperationalError, InterfaceError):
        # The connection died inside a transaction (PostgreSQL restarted): peewee still counts the
        # transaction open and refuses to close. Forget it and drop the connection from the pool,
        # so the next request of this thread connects again.
        database._state.transactions.clear()
        database.manual_close()


def _levels() -> list[list[Callable[[], None]]]:
    if not hasattr(_state, "levels"):
        _state.levels = []
    return _state.levels


def _batches() -> list[dict[str, tuple[list, Callable[[list], None]]]]:
    if not hasattr(_state, "batches"):
        _state.batches = []
    return _state.batches


@contextmanager
def transaction() -> Iterator[None]:
    """A transaction (a savepoint when nested); on_commit hooks run after the outermost commit,
    `block_batch` lists are written at the end of their block, inside it."""
    levels, batches = _levels(), _batches()
    if batches:  # the enclosing block's waiting rows are its own: written before the savepoint
        write_block_batches()
    levels.append([])
    batches.append({})
    try:
        with database.atomic():
            yield
            write_block_batches()
    except BaseException:
        levels.pop()
        batches.pop()
        raise
    batches.pop()
    hooks = levels.pop()
    if levels:
        levels[-1].extend(hooks)
        return
    for hook in hooks:
        hook()


def block_batch(key: str, write: Callable[[list], None]) -> list:
    """The innermost `transaction()` block's list under `key`: what is appended to it is handed
    to `write(items)` when the block ends, inside it (before its savepoint is released or its
    transaction committed), so that many rows go in one statement; a block that raises drops
    its list with its savepoint. A nested block starting, or `write_block_batches()` (a read of
    the table the rows go to), writes them earlier, in the same block: only the innermost block
    ever has rows waiting."""
    batches = _batches()
    if not batches:
        raise RuntimeError("block_batch needs an enclosing transaction()")
    if key not in batches[-1]:
        batches[-1][key] = ([], write)
    return batches[-1][key][0]


def write_block_batches() -> None:
    """Write what waits in the innermost block's `block_batch` lists now (inside that block)."""
    batches = _batches()
    if batches:
        for items, write in batches[-1].values():
            if items:
                write(list(items))
                items.clear()


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


def commit_with(sql: str, params=None, *, then: str | None = None):
    """Run `sql`, the last statement of the outermost `transaction()`, with the COMMIT in the same
    round trip, and return the cursor. For a statement taking a row lock every concurrent
    transaction queues on (an invoice series' counter): the lock goes as soon as the commit is
    durable, without a round trip back to this process, whose thread may be waiting for a core
    or the GIL meanwhile. The statement's own result is not returned (the last statement's is):
    `then`, a read sent in the same round trip after the COMMIT (with the same `params`), reads
    what it wrote, once committed, outside the transaction and any lock. Nothing may be written
    after it; the block then ends without another COMMIT, its `on_commit` hooks run as usual.
    Nested (a test's enclosing transaction), it runs `sql`, then `then`: the outermost block
    commits."""
    levels = _levels()
    if not levels:
        raise RuntimeError("commit_with needs an enclosing transaction()")
    write_block_batches()  # this block's waiting rows are part of the transaction
    if len(levels) > 1:
        cursor = database.execute_sql(sql, params)
        return database.execute_sql(then, params) if then else cursor
    cursor = database.execute_sql(f"{sql}; COMMIT; {then}" if then else f"{sql}; COMMIT", params)
    _state.committed = True
    return cursor


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
    (`array_literal`). The fastest way in for thousands of rows: no statement to parse or plan (a
    1,000-row multi-row INSERT of print orders cost PostgreSQL 43 ms of CPU, its COPY 26), and the
    encoding done by the csv module in C (psycopg2's `execute_values` adapts row by row)."""
    values = [[_NULL if value is None else value for value in row] for row in rows]
    if not values:
        return
    buffer = io.StringIO()
    csv.writer(buffer, quoting=csv.QUOTE_NONNUMERIC).writerows(values)
    buffer.seek(0)
    cursor = database.cursor()
    statement = sql.SQL("COPY {} ({}) FROM STDIN WITH (FORMAT csv)").format(
        sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns)))
    cursor.copy_expert(statement.as_string(cursor.connection), buffer, size=1 << 20)  # 1 MiB reads, not 8 KiB


def array_literal(values: Iterable[str]) -> str:
    """A text array's literal (`{"a","b"}`), as `copy_rows` writes an array."""
    quoted = ('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"' for value in values)
    return "{" + ",".join(quoted) + "}"
