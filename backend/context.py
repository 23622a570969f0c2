"""Request correlation: the id of the request (or message) being handled, per thread."""

from __future__ import annotations

import random
import re
from contextvars import ContextVar

_request_id: ContextVar[str | None] = ContextVar("request_id", default=None)

REQUEST_ID_PATTERN = re.compile(r"^[A-Za-z0-9._:-]+$")
REQUEST_ID_MAX_LENGTH = 128


def accept_request_id(candidate: str | None) -> str:
    """The client's id when it is at most 128 characters of [A-Za-z0-9._:-], else a new UUID4."""
    if candidate and len(candidate) <= REQUEST_ID_MAX_LENGTH and REQUEST_ID_PATTERN.match(candidate):
        return candidate
    return new_uuid4()


_VARIANT = "89ab" * 4  # the RFC 4122 variant digit for each value of a random hex digit


def new_uuid4() -> str:
    """A random UUID4 (version 4, RFC 4122 variant) as `str(uuid.uuid4())` writes it, formatted
    directly, on every request without an id of its own. Its 122 random bits come from the
    process's `random` generator (seeded from the OS, and again in each forked child), not
    `os.urandom`: a request id correlates log lines, it guards nothing (the client may choose its
    own), and a `getrandom` system call per request is the costliest line of the cheapest route
    (`GET /api/health`) for no security gained."""
    h = f"{random.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[int(h[16], 16)]}{h[17:20]}-{h[20:]}"


def current_request_id() -> str | None:
    return _request_id.get()


def bind_request_id(value: str | None):
    """Set the id for the current context; returns the token to pass to `reset_request_id`."""
    return _request_id.set(value)


def reset_request_id(token) -> None:
    _request_id.reset(token)
