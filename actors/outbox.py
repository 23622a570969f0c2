"""The outbox sweeper: every minute, re-send rows still unsent after the resend delay."""

from __future__ import annotations

import dramatiq
from periodiq import cron

from backend import outbox
from backend.runtime import current_runtime


@dramatiq.actor(queue_name="default", max_retries=0, time_limit=60_000, throws=(), periodic=cron("* * * * *"))
def sweep_outbox() -> None:
    runtime = current_runtime()
    delay = runtime.config.outbox_resend_after_seconds if runtime else 60
    outbox.sweep(older_than_seconds=delay)
