"""`copy_rows` writes what a parameterized INSERT of the same values writes: None is NULL and an
empty text stays an empty text, whatever the text holds; `array_literal` is a text array's
literal."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from backend.db import array_literal, copy_rows, database

COLUMNS = ("n", "label", "note", "day", "at", "flag", "tags")
ROWS = [
    (1, "plain", None, date(2026, 11, 27), datetime(2026, 11, 27, 2, 10, 30, 296721, tzinfo=UTC), True, ["a"]),
    (2, "", "", None, None, False, []),  # an empty text is not NULL
    (None, 'a "quoted", comma\nand a line\r\nbreak', "\\N", date(2026, 1, 1), "2026-11-27T02:10:30.5+00:00", None,
     ['"q"', "back\\slash", "a,b", "{brace}", "", "NULL"]),
]


@pytest.mark.owner  # temporary tables: only the owner may create them
def test_copy_rows_writes_what_an_insert_of_the_same_values_writes():
    database.execute_sql("CREATE TEMP TABLE copied (n integer, label text, note text, day date, at timestamptz,"
                         " flag boolean, tags text[])")
    database.execute_sql("CREATE TEMP TABLE inserted (LIKE copied)")
    copy_rows("copied", COLUMNS, [(*row[:-1], array_literal(row[-1])) for row in ROWS])
    for row in ROWS:
        database.execute_sql("INSERT INTO inserted VALUES (%s, %s, %s, %s, %s, %s, %s::text[])", row)
    read = "SELECT n, label, note, day, at, flag, tags, label IS NULL, note IS NULL FROM {} ORDER BY label"
    copied = database.execute_sql(read.format("copied")).fetchall()
    assert copied == database.execute_sql(read.format("inserted")).fetchall()
    assert [row[2] for row in copied] == ["", "\\N", None] and copied[0][1] == "" and copied[0][-2] is False


def test_copy_rows_of_no_row_sends_nothing():
    copy_rows("no_such_table", ("n",), [])  # a COPY would fail: the table does not exist
