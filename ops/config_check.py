"""`vitrine config check`: the configuration as every process reads it at start, nothing started.

The check itself is the one every `vitrine` command and process runs before anything else
(`ops.cli.main` calls `backend.config.load_config`): a blocking problem is one line
`vitrine: configuration error: ...` per problem on stderr and exit status 2. This module only says
what a valid configuration amounts to: one summary line, then its warnings, exit status 0.
Nothing is started or created (no embedded server, no data directory, no connection).
"""

from __future__ import annotations

import re
from pathlib import Path

from backend.config import Config, ConfigError
from backend.logs import url_without_password

_LINE = re.compile(r"(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)")
_INLINE_COMMENT = re.compile(r"\s+#.*$")


def read_env_file(path: Path) -> dict[str, str]:
    """The settings of a `.env` file (`.env.example`'s format, which `heroku local` and honcho read):
    `NAME=value` lines, blank lines and `# comments` skipped, an unquoted value ending at ` #`, a
    quoted one taken as it is. A line of another shape is a configuration error naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the settings file {path}: {exc}") from None
    settings, problems = {}, []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _LINE.fullmatch(line)
        if match is None:
            problems.append(f"{path} line {number}: not NAME=value: {line[:60]!r}")
            continue
        name, value = match.groups()  # the value with its leading blanks: `A=  # note` is empty
        if len(value.strip()) >= 2 and value.strip()[0] == value.strip()[-1] and value.strip()[0] in "'\"":
            value = value.strip()[1:-1]
        else:
            value = _INLINE_COMMENT.sub("", value).strip()
        settings[name] = value
    if problems:
        raise ConfigError(*problems)
    return settings


def summary(config: Config) -> list[str]:
    """One line saying the configuration is valid and where the data goes, then one per warning."""
    data_dir = config.data_dir
    database = url_without_password(config.database_url) if config.database_url else f"embedded in {data_dir}"
    if not config.database_url and not (data_dir / "postgres" / "PG_VERSION").exists():
        database += " (not created yet: `vitrine migrate` or `vitrine dev` creates it)"
    redis = url_without_password(config.redis_url) if config.redis_url else f"embedded in {data_dir}"
    volume = " (declared on a persistent volume)" if config.storage_persistent_volume else ""
    storage = (f"gcs bucket {config.gcs_bucket}" if config.storage_backend == "gcs"
               else f"local {data_dir}/storage{volume}")
    mail = "SMTP_URL" if config.smtp_url else f"files in {data_dir}/mail"
    warnings = [*config.warnings, *self_billing_warnings(config)]
    count = len(warnings)
    lines = [f"configuration valid ({config.environment}): database {database}, Redis {redis}, storage {storage}, "
             f"e-mail {mail}, log level {config.log_level}; {count} warning{'' if count == 1 else 's'}"]
    return lines + [f"warning: {warning}" for warning in warnings]


def self_billing_warnings(config: Config) -> list[str]:
    """In production, self-billed invoices issued (the scheduler on) but kept out of e-invoicing: a
    self-billed invoice is an invoice like any other under the reform, deposited by the platform
    that draws it up (docs/einvoicing.md, "Configuration")."""
    if config.environment == "production" and config.self_billing_scheduler_enabled \
            and not config.einvoicing_self_billing_enabled:
        return ["EINVOICING_SELF_BILLING_ENABLED=false while SELF_BILLING_SCHEDULER_ENABLED=true: the self-billed "
                "invoices are issued but never transmitted to the e-invoicing operator (set "
                "EINVOICING_SELF_BILLING_ENABLED=true)"]
    return []


# Policies under which Redis, once full, evicts keys without an expiry: queued messages among them.
_DROPPING_POLICIES = ("allkeys-lru", "allkeys-lfu", "allkeys-random")


def redis_warnings(url: str | None) -> list[str]:
    """What the Redis at `url` may lose: a warning when its eviction policy may drop queued
    messages (read with INFO, which managed Redis services allow where CONFIG is disabled). A
    Redis that cannot be reached says nothing here: the process that needs it says why."""
    if not url:
        return []
    import redis

    try:
        policy = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2).info("memory").get(
            "maxmemory_policy")
    except redis.RedisError:
        return []
    if policy in _DROPPING_POLICIES:
        return [f"REDIS_URL: the Redis eviction policy {policy} may drop queued messages once memory is full "
                "(set maxmemory-policy noeviction)"]
    return []
