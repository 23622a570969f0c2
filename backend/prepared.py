"""SQL fragments: pieces of SQL with named values that one module writes and another embeds
(`Fragment`, `bind`), and `Statement`, a named plain statement.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from backend.db import database

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
    """One SQL statement with named parameters, sent as plain SQL (nothing is prepared on the
    server); `name` only labels it."""

    def __init__(self, name: str, sql: str) -> None:
        if not name.isidentifier():
            raise ValueError(f"a statement's name is an SQL identifier: {name!r}")
        self.name = name
        self.sql = sql
        # Its PREPARE and EXECUTE texts, for the benchmark's bare reference (`ops/bench`) only.
        parameters = list(dict.fromkeys(_PARAMETER.findall(sql)))
        numbered = _PARAMETER.sub(lambda match: f"${parameters.index(match.group(1)) + 1}", sql)
        self.prepare_sql = f"PREPARE {name} AS {numbered}"
        self.execute_sql = (f"EXECUTE {name}({', '.join(f'%({p})s' for p in parameters)})" if parameters
                            else f"EXECUTE {name}")

    def execute(self, params: Mapping[str, object], *, before: Fragment | None = None):
        """Run the statement on this thread's connection; its cursor (as `database.execute_sql`).
        `before`: SQL sent first (its values named in `params` too), whose result is not returned."""
        if before is not None:
            database.execute_sql(str(before), params)
        return database.execute_sql(self.sql, params)

    def execute_and_commit(self, params: Mapping[str, object], *, then: Statement | None = None):
        """Run the statement, then `then` (given the same values) when given; the last cursor. The
        enclosing `transaction()` commits as any other."""
        cursor = self.execute(params)
        return then.execute(params) if then is not None else cursor
