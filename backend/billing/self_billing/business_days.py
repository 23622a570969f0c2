"""French business days and the incident window of a reservation (spec C, API.md).

A business day is a Monday to Friday, in Europe/Paris, that is not a French public holiday (the
`holidays` package: 1 January, Easter Monday, 1 and 8 May, Ascension, Whit Monday, 14 July,
15 August, 1 and 11 November, 25 December; the Alsace-Moselle extra days are not national).

The incident window of a reservation opens at its `startsAt` and closes at the end
(23:59:59 Europe/Paris) of the third business day after the day of its `endsAt` (that day itself
does not count, whether or not it is a business day). Self-billing is due from then on.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import holidays

PARIS = ZoneInfo("Europe/Paris")
WINDOW_BUSINESS_DAYS = 3


@functools.lru_cache(maxsize=16)
def _french_holidays(year: int) -> frozenset[date]:
    return frozenset(holidays.France(years=year))


def is_business_day(day: date) -> bool:
    return day.weekday() < 5 and day not in _french_holidays(day.year)


def add_business_days(day: date, count: int) -> date:
    """The `count`-th business day after `day` (`day` itself never counts)."""
    if count < 1:
        raise ValueError("count must be at least 1")
    while count:
        day += timedelta(days=1)
        if is_business_day(day):
            count -= 1
    return day


@dataclass(frozen=True)
class Window:
    """`opens_at` <= moment < `ends_before`; `closes_at` (23:59:59 Paris) is what people read."""

    opens_at: datetime
    closes_at: datetime
    ends_before: datetime

    def position(self, moment: datetime) -> str:
        """`not_started`, `open` or `window_closed`."""
        if moment < self.opens_at:
            return "not_started"
        return "open" if moment < self.ends_before else "window_closed"


def incident_window(starts_at: datetime, ends_at: datetime) -> Window:
    last_day = add_business_days(ends_at.astimezone(PARIS).date(), WINDOW_BUSINESS_DAYS)
    closes_at = datetime.combine(last_day, time(23, 59, 59), PARIS)
    ends_before = datetime.combine(last_day + timedelta(days=1), time(0, 0), PARIS)
    return Window(opens_at=starts_at, closes_at=closes_at, ends_before=ends_before)


def self_billing_due(ends_at: datetime, moment: datetime) -> bool:
    """Whether the reservation's incident window has closed at `moment` (self-billing is due)."""
    return incident_window(ends_at, ends_at).position(moment) == "window_closed"
