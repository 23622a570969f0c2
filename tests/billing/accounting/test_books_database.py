"""What the database guarantees of the books, whatever the code does (migration 140): balanced
entries, gapless numbers per journal and fiscal year in validation order, append-only tables,
closed periods, lettering of a piece's third-party lines once they sum to zero."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from peewee import DatabaseError

from backend import clock
from backend.billing.accounting import closing, entries
from backend.billing.accounting.chart import Account, Journal
from backend.billing.accounting.entries import Entry, Line, Party, UnbalancedEntry, paris_day
from backend.db import database, transaction
from backend.errors import Conflict
from tests.billing.accounting.books import book_lines, validate_now

CUSTOMER = Party("552100554", "Client SAS")


def _sale(day: date, cents: int = 1_200, journal: Journal = Journal.SALES, group: str = "piece-1") -> Entry:
    return Entry(journal=journal, event="test", day=day, label="Vente", piece_ref="P-1", piece_date=day, lines=(
        Line(Account.CUSTOMERS, debit_cents=cents, party=CUSTOMER, letter_group=group),
        Line(Account.SERVICES_SOLD, credit_cents=cents)))


def _numbers(*ids: str) -> list[tuple]:
    validate_now()
    return [database.execute_sql("SELECT journal_code, fiscal_year, number, entry_date FROM accounting_entry"
                                 " WHERE id = %s", (entry_id,)).fetchone() for entry_id in ids]


def test_entries_are_numbered_without_gap_per_journal_and_fiscal_year_in_validation_order():
    ids = [entries.post(entry)[0] for entry in (
        _sale(date(2026, 3, 1)), _sale(date(2026, 2, 1)), _sale(date(2027, 1, 2)),
        _sale(date(2026, 5, 1), journal=Journal.BANK), _sale(date(2026, 12, 31)))]
    numbered = _numbers(*ids)
    ve_2026 = [row[2] for row in numbered if row[:2] == ("VE", 2026)]
    assert ve_2026 == list(range(ve_2026[0], ve_2026[0] + 3))  # validation order, not the entry dates'
    assert [row[:2] for row in numbered] == [("VE", 2026), ("VE", 2026), ("VE", 2027), ("BQ", 2026), ("VE", 2026)]


def test_the_fiscal_year_follows_accounting_fiscal_year_end():
    entries.use_fiscal_year_end("06-30")
    try:
        early, late = entries.post(_sale(date(2026, 6, 30)))[0], entries.post(_sale(date(2026, 7, 1)))[0]
        assert [row[1] for row in _numbers(early, late)] == [2026, 2027]
        assert entries.fiscal_year_bounds(2027) == (date(2026, 7, 1), date(2027, 6, 30))
    finally:
        entries.use_fiscal_year_end("12-31")


def test_an_unbalanced_entry_is_refused_by_python_and_by_the_database():
    with pytest.raises(UnbalancedEntry):
        Entry(journal=Journal.OTHER, event="test", day=date(2026, 1, 5), label="x", lines=(
            Line(Account.BANK, debit_cents=5), Line(Account.SERVICES_SOLD, credit_cents=4)))
    with pytest.raises(DatabaseError, match="does not balance"), transaction():
        database.execute_sql("INSERT INTO accounting_entry (id, journal_code, fiscal_year, entry_date, label, event)"
                             " VALUES ('raw-1', 'OD', 2026, '2026-01-05', 'raw', 'raw')")
        database.execute_sql("INSERT INTO accounting_line (entry_id, line_no, account, label, debit_cents,"
                             " credit_cents) VALUES ('raw-1', 1, '512', 'raw', 500, 0),"
                             " ('raw-1', 2, '706', 'raw', 0, 400)")
        validate_now()


@pytest.mark.owner  # the triggers hold for the owner too (the runtime role holds no UPDATE or DELETE at all)
def test_entries_and_lines_are_append_only_and_a_validated_entry_takes_no_new_line():
    (entry_id,) = entries.post(_sale(date(2026, 4, 1)))
    validate_now()
    for statement in ("UPDATE accounting_entry SET label = 'x' WHERE id = %s",
                      "UPDATE accounting_entry SET number = number + 1 WHERE id = %s",
                      "DELETE FROM accounting_entry WHERE id = %s",
                      "UPDATE accounting_line SET debit_cents = 1 WHERE entry_id = %s",
                      "DELETE FROM accounting_line WHERE entry_id = %s"):
        with pytest.raises(DatabaseError, match="append-only"), transaction():
            database.execute_sql(statement, (entry_id,))
    with pytest.raises(DatabaseError, match="is validated"), transaction():
        database.execute_sql("INSERT INTO accounting_line (entry_id, line_no, account, label, debit_cents,"
                             " credit_cents) VALUES (%s, 9, '512', 'x', 1, 0), (%s, 10, '706', 'x', 0, 1)",
                             (entry_id, entry_id))


def test_a_closed_period_takes_no_entry_and_later_events_post_on_the_first_open_day():
    closing.close_until(date(2026, 3, 31), closed_by="test")
    assert closing.closed_until() == date(2026, 3, 31)
    late, normal = entries.post(_sale(date(2026, 3, 15)))[0], entries.post(_sale(date(2026, 4, 2)))[0]
    assert [row[3] for row in _numbers(late, normal)] == [date(2026, 4, 1), date(2026, 4, 2)]
    with pytest.raises(DatabaseError, match="closed period"), transaction():
        database.execute_sql("INSERT INTO accounting_entry (id, journal_code, fiscal_year, entry_date, label, event)"
                             " VALUES ('raw-2', 'OD', 2026, '2026-03-31', 'raw', 'raw')")
    with pytest.raises(Conflict) as refused:
        closing.close_until(date(2026, 1, 31), closed_by="test")
    assert refused.value.details["reason"] == "already_closed"


def test_a_period_not_over_is_not_closed_so_no_entry_is_validated_before_its_date():
    today = paris_day(clock.now())
    for day in (today, today + timedelta(days=30)):
        with pytest.raises(Conflict) as refused:
            closing.close_until(day, closed_by="test")
        assert refused.value.details["reason"] == "period_not_over"
    closing.close_until(today - timedelta(days=1), closed_by="test")
    [late] = entries.post(_sale(today - timedelta(days=3)))
    validate_now()
    entry_date, valid_day = database.execute_sql(
        "SELECT entry_date, (validated_at AT TIME ZONE 'Europe/Paris')::date FROM accounting_entry WHERE id = %s",
        (late,)).fetchone()
    assert entry_date == today and valid_day >= entry_date


def test_a_piece_is_lettered_once_its_third_party_lines_sum_to_zero():
    day = date(2026, 5, 4)
    entries.post(_sale(day, 1_000, group="g-1"))
    partial = Entry(journal=Journal.BANK, event="test", day=day, label="Acompte", lines=(
        Line(Account.BANK, debit_cents=400), Line(Account.CUSTOMERS, credit_cents=400, party=CUSTOMER,
                                                  letter_group="g-1")))
    entries.post(partial)
    assert {line["letter"] for line in book_lines(event="test")} == {None}  # partly paid: not lettered
    rest = Entry(journal=Journal.BANK, event="test", day=date(2026, 5, 9), label="Solde", lines=(
        Line(Account.BANK, debit_cents=600), Line(Account.CUSTOMERS, credit_cents=600, party=CUSTOMER,
                                                  letter_group="g-1")))
    entries.post(rest)
    receivable = [line for line in book_lines(event="test") if line["account"] == "411"]
    assert len(receivable) == 3 and len({line["letter"] for line in receivable}) == 1 and receivable[0]["letter"]
    lettered_on = database.execute_sql("SELECT DISTINCT lettered_on FROM accounting_lettering WHERE code = %s",
                                       (receivable[0]["letter"],)).fetchone()[0]
    assert lettered_on == date(2026, 5, 9)
