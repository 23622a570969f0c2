"""Process boot shared by web, worker, clock and CLI: config, logs, database, storage."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from backend.config import Config, load_config
from backend.db import init_database
from backend.logs import configure_logging, get_logger, register_secrets
from storage import Storage, build_storage

log = get_logger("boot")


@dataclass(frozen=True)
class Runtime:
    config: Config
    storage: Storage


_current: Runtime | None = None


def current_runtime() -> Runtime | None:
    """The runtime this process booted with (None before boot)."""
    return _current


def boot(config: Config | None = None, *, role: str) -> Runtime:
    """Read the configuration (ConfigError stops the process), then set up logs, database, storage.

    `DATABASE_URL` / `REDIS_URL` left unset mean the embedded servers of the data directory.
    Booting again (tests build several apps) keeps the database pool when the URL is unchanged.
    """
    global _current
    config = config or load_config()
    configure_logging(config.log_level)
    register_secrets(config.secrets())
    config = with_service_urls(config)
    if _current is None or _current.config != config:
        if os.environ.get("VITRINE_SUPERVISOR") != "dev":  # `vitrine dev` prints them once, in its banner
            for warning in config.warnings:
                log.warning(warning)
        log.info("boot", extra={"fields": {"role": role, "settings": config.describe()}})
    if _current is None or _current.config.database_url != config.database_url:
        init_database(config.database_url)
    _current = Runtime(config=config, storage=build_storage(config))
    return _current


def with_service_urls(config: Config) -> Config:
    if config.database_url and config.redis_url:
        return config
    from backend.embedded import ensure_postgres, ensure_redis  # development default only

    return replace(
        config,
        database_url=config.database_url or ensure_postgres(config.data_dir),
        redis_url=config.redis_url or ensure_redis(config.data_dir),
    )
