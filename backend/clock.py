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
    """ISO 8601 in UTC with `Z`, as the API writes dates."""
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
