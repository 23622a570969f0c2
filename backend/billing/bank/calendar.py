"""The days the bank moves money: TARGET2 business days (the `holidays` package's ECB calendar,
`XECB`: every Monday to Friday but 1 January, Good Friday, Easter Monday, 1 May, 25 and 26
December), and the dates the files ask for.

A SEPA direct debit (Core and B2B rulebooks since 2016, FRST and RCUR alike) must reach the
debtor's bank one TARGET2 day before its collection date: a file made today (or, on a closed day,
the next TARGET2 day, when the bank first handles it) asks for the TARGET2 day after that.
A credit transfer is executed on the first TARGET2 day from today.
"""

from __future__ import annotations

import functools
from datetime import date, timedelta

import holidays

DIRECT_DEBIT_LEAD_DAYS = 1  # TARGET2 days between the day the bank receives a debit and its collection date


@functools.lru_cache(maxsize=16)
def _closed_days(year: int) -> frozenset[date]:
    return frozenset(holidays.financial_holidays("XECB", years=year))


def is_target_day(day: date) -> bool:
    return day.weekday() < 5 and day not in _closed_days(day.year)


def first_target_day_from(day: date) -> date:
    """`day` when it is a TARGET2 day, else the next one."""
    while not is_target_day(day):
        day += timedelta(days=1)
    return day


def collection_date(today: date) -> date:
    """The first collection date the scheme allows for a direct debit file made `today`."""
    day = first_target_day_from(today)
    for _ in range(DIRECT_DEBIT_LEAD_DAYS):
        day = first_target_day_from(day + timedelta(days=1))
    return day


def execution_date(today: date) -> date:
    """The requested execution date of a credit transfer file made `today`."""
    return first_target_day_from(today)
