"""What the HTTP clients of external providers share (`backend/onboarding/esign_client.py`,
`backend/onboarding/registry_client.py`): an answer worth another attempt, and tenacity's policy
around it: a bounded number of attempts, waiting the provider's `Retry-After` when it sends one,
else a delay doubling from `backoff_seconds`, never more than `max_backoff_seconds`."""

from __future__ import annotations

import requests
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt


class Retryable(Exception):
    """A 429, a 5xx or a network error: the call may succeed if tried again."""

    def __init__(self, reason: str, *, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.retry_after = retry_after


def retry_after(response: requests.Response) -> float | None:
    """The answer's `Retry-After` in seconds (None when absent or not a number of seconds)."""
    try:
        return max(0.0, float(response.headers.get("Retry-After", "")))
    except ValueError:
        return None


def retrying(*, attempts: int, backoff_seconds: float, max_backoff_seconds: float) -> Retrying:
    """Tenacity's `Retrying` for calls raising `Retryable`; the last one is re-raised."""

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        delay = backoff_seconds * 2 ** (state.attempt_number - 1)
        if isinstance(exc, Retryable) and exc.retry_after is not None:
            delay = exc.retry_after
        return min(delay, max_backoff_seconds)

    return Retrying(stop=stop_after_attempt(attempts), wait=wait, retry=retry_if_exception_type(Retryable),
                    reraise=True)
