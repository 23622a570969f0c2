"""JSON log lines: `{timestamp, level, scope, message, requestId, ...}`, one per line on stdout.

`get_logger(scope)` gives a logger whose name is the scope. Extra fields go through `extra=`
(`log.info("sent", extra={"fields": {...}})`) or `log_event`. Every record passes the
redaction filter: keys named like a secret are masked, known secret values are masked wherever
they appear, and any field longer than 2 KiB is truncated.
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
import re
import sys
from datetime import UTC, datetime

from backend.context import current_request_id

LEVEL_NAMES = {logging.DEBUG: "debug", logging.INFO: "info", logging.WARNING: "warn", logging.ERROR: "error",
               logging.CRITICAL: "error"}
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING, "error": logging.ERROR}
MAX_FIELD_BYTES = 2048
REDACTED = "[REDACTED]"
_ANYWHERE = frozenset({"password", "passwd", "secret", "authorization", "iban", "apikey"})
_LAST = frozenset({"token", "tokens", "cookie", "cookies", "dsn", "pass"})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

_secret_values: list[str] = []


def register_secrets(values: list[str]) -> None:
    """Values (API keys, webhook secrets ...) that must never appear in a log line."""
    for value in values:
        if value and len(value) >= 4 and value not in _secret_values:
            _secret_values.append(value)


def _mask(text: str) -> str:
    for secret in _secret_values:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def _truncate(text: str) -> str:
    if len(text) * 4 <= MAX_FIELD_BYTES:  # 4 bytes a character at most in UTF-8: short enough as is
        return text
    raw = text.encode()
    if len(raw) <= MAX_FIELD_BYTES:
        return text
    return raw[:MAX_FIELD_BYTES].decode(errors="ignore") + f"...[truncated {len(raw) - MAX_FIELD_BYTES} bytes]"


def url_without_password(url: str) -> str:
    """A connection URL as it may be shown: a password in its user part or in a `password=` query
    parameter becomes `***` (`redis://:***@host:6379/0`); an empty or absent one is left as is, so
    the URL still says truthfully that there is none (`postgresql://postgres:@/vitrine?host=...`)."""
    scheme, sep, rest = url.partition("://")
    if sep:
        end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
        authority, tail = rest[:end], rest[end:]
        creds, at, host = authority.rpartition("@")
        user, colon, password = creds.partition(":")
        if at and colon and password:
            url = f"{scheme}://{user}:***@{host}{tail}"
    return _QUERY_PASSWORD.sub(lambda m: m.group(1) + ("***" if m.group(2) else ""), url)


_QUERY_PASSWORD = re.compile(r"([?&]password=)([^&#]*)", re.IGNORECASE)


@functools.lru_cache(maxsize=4096)  # a handful of keys recur on every line (the access line's on every request)
def is_secret_key(key: str) -> bool:
    """Keys named like a secret: password, token, secret, authorization, cookie, api_key, iban ..."""
    words = [w for w in re.split(r"[^a-z0-9]+", _CAMEL.sub("_", key).lower()) if w]
    if not words:
        return False
    joined = set(words) | {a + b for a, b in itertools.pairwise(words)}
    return bool(joined & _ANYWHERE) or words[-1] in _LAST


def redact(value: object, key: str | None = None) -> object:
    """A copy of `value` safe to log: secret keys masked, secret values masked, long text cut."""
    if key is not None and is_secret_key(key):
        return REDACTED
    kind = type(value)  # the usual exact types first: a log line's fields are mostly these
    if kind is str:
        return _truncate(_mask(value))
    if kind is int or kind is bool or kind is float or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    if isinstance(value, str):
        return _truncate(_mask(value))
    if isinstance(value, int | float | bool):
        return value
    return _truncate(_mask(str(value)))


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "timestamp": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": LEVEL_NAMES.get(record.levelno, "info"),
            "scope": record.name,
            "message": _truncate(_mask(record.getMessage())),
            "requestId": getattr(record, "request_id", None) or current_request_id(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            for k, v in redact(fields).items():
                line.setdefault(k, v)
        if record.exc_info:
            line["stack"] = _mask(self.formatException(record.exc_info))
        return json.dumps(line, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """Short lines for a person at a terminal (a `vitrine` command's stderr): `vitrine: warning:
    message (scope; key=value ...)`, through the same redaction as the JSON lines. Only plain
    fields are shown (the boot line's settings are the JSON format's); an error's stack follows it."""

    def format(self, record: logging.LogRecord) -> str:
        level = LEVEL_NAMES.get(record.levelno, "info").replace("warn", "warning")
        details = [] if record.name in ("boot", "root") else [record.name]
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            plain = [f"{k}={v}" for k, v in redact(fields).items() if not isinstance(v, dict | list)]
            details += [" ".join(plain)] if plain else []
        line = f"vitrine: {level}: {_truncate(_mask(record.getMessage()))}"
        if details:
            line += f" ({'; '.join(details)})"
        if record.exc_info:
            line += "\n" + _mask(self.formatException(record.exc_info))
        return line


_configured = False


def _is_runner_handler(handler: logging.Handler) -> bool:
    """The text handler a process runner's `logging.basicConfig` installed before our code was
    imported (`dramatiq` and `periodiq` do): left in place, every record of a worker or of the
    clock would be written twice, once not as JSON."""
    return type(handler) is logging.StreamHandler and not isinstance(handler.formatter, JsonFormatter)


class _StandardStreamHandler(logging.StreamHandler):
    """Writes to `sys.stdout` (or `sys.stderr`) as it is when a record is emitted, not as it was
    when logging was configured: whoever swaps it (pytest's capture, which closes its own stream
    afterwards) must not leave a handler writing to a closed file (`ValueError: I/O operation on
    closed file`)."""

    def __init__(self, name: str) -> None:
        self.standard = name
        super().__init__(getattr(sys, name))

    @property
    def stream(self):  # type: ignore[override]
        return getattr(sys, self.standard)

    @stream.setter
    def stream(self, value) -> None:
        pass


def configure_logging(level: str = "info", stream=None, formatter: logging.Formatter | None = None
                      ) -> logging.Handler | None:
    """Install the JSON handler (or `formatter`'s) on the root logger and return it (idempotent:
    called again without a stream, only the level changes, and None is returned). `stream` is a
    file, or "stderr" for the process's standard error as it is at each record (stdout when none)."""
    global _configured
    root = logging.getLogger()
    root.setLevel(LEVELS.get(level, logging.INFO))
    # What no line of ours shows (the logging HOWTO's "Optimization"): the caller's file and line,
    # the thread, the process. Each record skips looking them up.
    logging._srcfile = None
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    if _configured and stream is None:
        return None
    for handler in list(root.handlers):
        if getattr(handler, "_vitrine", False) or _is_runner_handler(handler):
            root.removeHandler(handler)
    if stream is None or stream == "stderr":
        handler: logging.StreamHandler = _StandardStreamHandler("stderr" if stream else "stdout")
    else:
        handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter or JsonFormatter())
    handler._vitrine = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    for noisy in ("urllib3", "google", "gunicorn.access", "pgserver", "peewee_migrate.logs", "fontTools",
                  "weasyprint.progress"):  # "Step 2 - Fetching and parsing CSS" ... at every render
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
    _configured = True
    return handler


def get_logger(scope: str) -> logging.Logger:
    return logging.getLogger(scope)


def log_event(scope: str, message: str, level: str = "info", **fields: object) -> None:
    """One structured line in `scope` with extra fields (redacted and truncated)."""
    logging.getLogger(scope).log(LEVELS[level], message, extra={"fields": fields})
