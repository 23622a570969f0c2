"""Request correlation: the id of the request (or message) being handled, per thread."""

from __future__ import annotations

import re
import uuid
from contextvars import ContextVar

_request_id: ContextVar[str | None] = ContextVar("request_id", default=None)

REQUEST_ID_PATTERN = re.compile(r"^[A-Za-z0-9._:-]+$")
REQUEST_ID_MAX_LENGTH = 128


def accept_request_id(candidate: str | None) -> str:
    """The client's id when it is at most 128 characters of [A-Za-z0-9._:-], else a new UUID4."""
    if candidate and len(candidate) <= REQUEST_ID_MAX_LENGTH and REQUEST_ID_PATTERN.match(candidate):
        return candidate
    return str(uuid.uuid4())


def current_request_id() -> str | None:
    return _request_id.get()


def bind_request_id(value: str | None):
    """Set the id for the current context; returns the token to pass to `reset_request_id`."""
    return _request_id.set(value)


def reset_request_id(token) -> None:
    _request_id.reset(token)
