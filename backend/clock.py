"""The one clock of the domain: `now()` in UTC; tests move it with `frozen_at`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

_frozen: datetime | None = None


def now() -> datetime:
    return _frozen if _frozen is not None else datetime.now(UTC)


@contextmanager
def frozen_at(moment: datetime) -> Iterator[None]:
    """Make `now()` answer `moment` inside the block (tests only)."""
    global _frozen
    previous, _frozen = _frozen, moment
    try:
        yield
    finally:
        _frozen = previous


def iso(moment: datetime | None) -> str | None:
    """ISO 8601 in UTC with `Z`, to the millisecond, as the API writes dates (naive: taken as UTC).
    Twice per row of a search page: what PostgreSQL hands back is already UTC (`tzinfo is UTC`)
    and keeps its offset, `+00:00`, which is cut for `Z` (no conversion, no search-and-replace)."""
    if moment is None:
        return None
    if moment.tzinfo is not UTC:
        moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return moment.isoformat(timespec="milliseconds")[:-6] + "Z"
