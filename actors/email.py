"""E-mail delivery: one message per call, retried with backoff when SMTP fails."""

from __future__ import annotations

import dramatiq

from backend.email import messages
from backend.identity.links import mint_link
from backend.runtime import current_runtime


@dramatiq.actor(queue_name="email", max_retries=8, time_limit=60_000, throws=())
def deliver_email(email_id: str) -> None:
    runtime = current_runtime()
    messages.deliver_email(email_id, config=runtime.config, mint_link=mint_link, storage=runtime.storage)
