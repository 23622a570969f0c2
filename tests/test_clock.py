"""`clock.iso`, the API's way of writing a date: UTC, to the millisecond, with `Z`."""

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from hypothesis import given, seed, settings
from hypothesis import strategies as st

from backend import clock

ZONES = st.sampled_from([None, UTC, timezone(timedelta(0)), timezone(timedelta(hours=2)),
                         timezone(-timedelta(hours=9, minutes=30)), ZoneInfo("Europe/Paris"), ZoneInfo("UTC")])


@seed(36)
@settings(max_examples=300)
@given(st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(9998, 1, 1)), ZONES)
def test_iso_writes_any_moment_as_utc_to_the_millisecond_with_z(moment, zone):
    moment = moment.replace(tzinfo=zone)
    as_utc = moment.replace(tzinfo=UTC) if zone is None else moment.astimezone(UTC)
    written = clock.iso(moment)
    assert written == as_utc.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    assert datetime.fromisoformat(written) == as_utc.replace(microsecond=as_utc.microsecond // 1000 * 1000)


def test_iso_of_nothing_is_nothing():
    assert clock.iso(None) is None
