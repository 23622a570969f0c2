"""Server-side prepared statements for the few statements every request of a hot path sends.

PostgreSQL plans a statement each time it receives its text: for the joins and `WITH` statements
of the session lookup and the collection, planning costs more than the execution (figures:
docs/benchmarks.md, "Billing collection"). A `Statement` is prepared once per connection (`PREPARE`, the first time the
connection sends it) and then sent as `EXECUTE name(values)`: parsed and planned once, and after
five runs PostgreSQL keeps a generic plan when it is no worse than the custom ones.

The SQL is written with psycopg2's named parameters (`%(name)s`), turned into `$n` for `PREPARE`;
a parameter whose type PostgreSQL cannot infer from where it stands is cast in the SQL
(`%(ids)s::text[]`). The values are bound by psycopg2 as for any statement.

A prepared statement lives as long as its connection, whatever the transactions do (`PREPARE` is
not undone by a rollback): each connection remembers the statements it prepared (`prepared`, a
set on `backend.db`'s connection, gone with it) and a new connection prepares them again. This needs the
application's own connections to PostgreSQL, which it has (its pool, `backend.db`); behind a
pooler in transaction mode (PgBouncer before 1.21, or without `max_prepared_statements`), sessions
are shared and this module must not be used.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from backend.db import commit_with, database

_PARAMETER = re.compile(r"%\((\w+)\)s")


class Fragment:
    """A piece of SQL another statement embeds (a `WITH` part, a select list, a join), the one
    convention for it: the module that owns the tables writes the text, with named values
    (`%(name)s`), and the function giving those values, which returns through `values` (every
    name the text uses, no other: a mistake fails at the call, not as a wrong row). The statement
    that embeds it puts it in its own text (`f"... {records.SETTLE} ..."`) and its values in its
    own (`{**records.settle_values(...), ...}`). A fragment whose text depends on an argument
    (how many rows, a part's name) comes from a function of its module (`outbox.part_fragment`)."""

    __slots__ = ("names", "sql")

    def __init__(self, sql: str) -> None:
        self.sql = sql
        self.names = frozenset(_PARAMETER.findall(sql))

    def __str__(self) -> str:
        return self.sql

    def __repr__(self) -> str:
        return f"Fragment({self.sql[:60]!r}...)"

    def values(self, **values: object) -> dict:
        """`values`, checked against the names the text uses."""
        return bind((self,), values)


def bind(fragments: Iterable[Fragment], values: dict) -> dict:
    """`values` for fragments sent together (their names, no other); ValueError otherwise."""
    expected = frozenset().union(*(fragment.names for fragment in fragments))
    if values.keys() != expected:
        missing, unexpected = sorted(expected - values.keys()), sorted(values.keys() - expected)
        raise ValueError(f"SQL fragment values: missing {missing}, unexpected {unexpected}")
    return values


class Statement:
    """One SQL statement with named parameters, sent prepared (`execute`)."""

    def __init__(self, name: str, sql: str) -> None:
        if not name.isidentifier():
            raise ValueError(f"a prepared statement's name is an SQL identifier: {name!r}")
        self.name = name
        self.sql = sql
        self.parameters: list[str] = []
        for parameter in _PARAMETER.findall(sql):
            if parameter not in self.parameters:
                self.parameters.append(parameter)
        numbered = _PARAMETER.sub(lambda match: f"${self.parameters.index(match.group(1)) + 1}", sql)
        self.prepare_sql = f"PREPARE {name} AS {numbered}"  # sent with no values: `%%` stays as psycopg2 reads it
        self.execute_sql = f"EXECUTE {name}({', '.join(f'%({p})s' for p in self.parameters)})" if self.parameters \
            else f"EXECUTE {name}"

    def execute(self, params: Mapping[str, object], *, before: Fragment | None = None):
        """Run the statement on this thread's connection; its cursor (as `database.execute_sql`).
        `before`: SQL sent first in the same round trip (its values named in `params` too), whose
        result is not returned: an error there stops the string before the statement."""
        self._ensure_prepared()
        return database.execute_sql(f"{before}; {self.execute_sql}" if before else self.execute_sql, params)

    def execute_and_commit(self, params: Mapping[str, object], *, then: Statement | None = None):
        """Run the statement as the transaction's last, its COMMIT sent with it (`db.commit_with`),
        then `then` (given the same values) in the same round trip, once committed: the cursor
        holds the result of `then` (the statement's own is not returned)."""
        self._ensure_prepared()
        if then is not None:
            then._ensure_prepared()
        return commit_with(self.execute_sql, params, then=then.execute_sql if then is not None else None)

    def _ensure_prepared(self) -> None:
        prepared = database.connection().prepared  # this thread's connection: no lock needed
        if self not in prepared:
            # Alone, so that a failure of the EXECUTE never leaves the connection's state unknown.
            database.execute_sql(self.prepare_sql)
            prepared.add(self)
