"""French business days and the incident window (API.md): the window closes at 23:59:59
Europe/Paris of the third business day after the day of `endsAt`, across holidays, weekends, a
year change and both UTC offsets of Paris."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from backend import clock
from backend.billing.self_billing.business_days import (
    add_business_days,
    incident_window,
    is_business_day,
    self_billing_due,
)

PARIS = ZoneInfo("Europe/Paris")

# (what the row shows, day of endsAt in Paris, last day of the window)
WINDOWS = [
    ("plain week", date(2026, 11, 25), date(2026, 11, 30)),
    ("ends on a Saturday: the weekend never counts", date(2026, 11, 28), date(2026, 12, 2)),
    ("ends on a Sunday", date(2026, 11, 29), date(2026, 12, 2)),
    ("Easter Monday (6 April 2026)", date(2026, 4, 3), date(2026, 4, 9)),
    ("8 May and Ascension (14 May 2026)", date(2026, 5, 7), date(2026, 5, 13)),
    ("Ascension (Thursday 14 May 2026)", date(2026, 5, 12), date(2026, 5, 18)),
    ("Whit Monday (25 May 2026)", date(2026, 5, 22), date(2026, 5, 28)),
    ("14 July (Tuesday 2026)", date(2026, 7, 13), date(2026, 7, 17)),
    ("15 August (Friday 2025)", date(2025, 8, 13), date(2025, 8, 19)),
    ("1 November (Monday 2027)", date(2027, 10, 29), date(2027, 11, 4)),
    ("11 November (Wednesday 2026)", date(2026, 11, 10), date(2026, 11, 16)),
    ("25 December (Friday 2026)", date(2026, 12, 23), date(2026, 12, 29)),
    ("year change: 1 January 2027 is a Friday", date(2026, 12, 30), date(2027, 1, 5)),
    ("ends on a holiday (25 December)", date(2026, 12, 25), date(2026, 12, 30)),
]


@pytest.mark.parametrize(("label", "ends_day", "last_day"), WINDOWS, ids=[row[0] for row in WINDOWS])
def test_the_window_closes_at_the_end_of_the_third_business_day(label, ends_day, last_day):
    ends_at = datetime(ends_day.year, ends_day.month, ends_day.day, 18, 0, tzinfo=PARIS).astimezone(UTC)
    starts_at = ends_at - timedelta(days=14)
    window = incident_window(starts_at, ends_at)
    assert add_business_days(ends_day, 3) == last_day
    closes = window.closes_at.astimezone(PARIS)
    assert (closes.date(), closes.hour, closes.minute, closes.second) == (last_day, 23, 59, 59)
    assert window.position(starts_at - timedelta(seconds=1)) == "not_started"
    assert window.position(starts_at) == "open"
    assert window.position(window.closes_at) == "open"
    assert window.position(window.closes_at + timedelta(seconds=1)) == "window_closed"
    with clock.frozen_at(window.closes_at):
        assert not self_billing_due(ends_at, clock.now())
    with clock.frozen_at(window.closes_at + timedelta(seconds=1)):
        assert self_billing_due(ends_at, clock.now())


def test_the_day_of_ends_at_is_the_day_in_paris_and_the_offset_follows_the_season():
    # 23:30 UTC on Tuesday 24 November is already Wednesday 25 in Paris (UTC+1).
    winter = incident_window(datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 11, 24, 23, 30, tzinfo=UTC))
    assert winter.closes_at.astimezone(UTC) == datetime(2026, 11, 30, 22, 59, 59, tzinfo=UTC)
    # Summer time (UTC+2): 23:59:59 in Paris is 21:59:59 UTC.
    summer = incident_window(datetime(2026, 7, 1, tzinfo=UTC), datetime(2026, 7, 13, 10, 0, tzinfo=UTC))
    assert summer.closes_at.astimezone(UTC) == datetime(2026, 7, 17, 21, 59, 59, tzinfo=UTC)


@pytest.mark.parametrize(("day", "business"), [
    (date(2026, 4, 6), False), (date(2026, 5, 14), False), (date(2026, 5, 25), False), (date(2026, 7, 14), False),
    (date(2025, 8, 15), False), (date(2027, 11, 1), False), (date(2026, 11, 11), False), (date(2026, 12, 25), False),
    (date(2027, 1, 1), False), (date(2026, 11, 28), False), (date(2026, 11, 29), False),
    (date(2026, 11, 24), True), (date(2026, 12, 24), True), (date(2026, 12, 31), True),
    (date(2026, 4, 3), True),  # Good Friday is a holiday in Alsace-Moselle only
])
def test_business_days(day, business):
    assert is_business_day(day) is business
