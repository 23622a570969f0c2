"""Actors for operators and benchmarks: a no-op that shows a worker is consuming its queue."""

from __future__ import annotations

import dramatiq


@dramatiq.actor(queue_name="default", max_retries=3, time_limit=10_000, throws=())
def noop(*args: object) -> None:
    """Does nothing: a probe that a worker is consuming its queue (`vitrine bench` waits for it)."""
