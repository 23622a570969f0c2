"""The outbox sweeper: every minute, check the broker's epoch (work a Redis lost with its data is
handed over again at once), then re-send rows still unsent after the resend delay and rows whose
`redeliver_at` passed."""

from __future__ import annotations

import dramatiq
from periodiq import cron

from actors.broker import check_epoch
from backend import outbox
from backend.runtime import current_runtime


@dramatiq.actor(queue_name="default", max_retries=0, time_limit=60_000, throws=(), periodic=cron("* * * * *"))
def sweep_outbox() -> None:
    check_epoch()
    runtime = current_runtime()
    delay = runtime.config.outbox_resend_after_seconds if runtime else 60
    outbox.sweep(older_than_seconds=delay)
