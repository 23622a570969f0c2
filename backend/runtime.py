"""Process boot shared by web, worker, clock and CLI: config, logs, database, external clients.

The composition root of the back end. Each process boots once (`boot`): it reads the
configuration, sets up logs and the database pool, applies the process-wide settings of a few
helpers (password-hashing costs, the base of e-mail links), and builds every external client
once: object storage, the e-signature provider, the e-invoicing operator, the company registry. The web
(`api.app.create_app` -> `Deps`) and the worker (`actors`, which read `current_runtime()`) hand
these clients to the services that use them as arguments; no service looks a client up, and no
module under `backend/` but this one imports `backend.runtime` (an import contract says so).

Adding a client is one line in `Runtime`, a field whose metadata names the builder that makes it
from the configuration:

    archive: ArchiveClient = field(metadata=built_by(ArchiveClient.from_config))

`boot(config, role=..., esign=fake)` takes a ready-made client instead of building one (tests
hand in simulator-backed or fake clients this way; `create_app(config, esign=fake)` passes them on).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any

from backend.billing.accounting import entries as books
from backend.config import Config, load_config
from backend.db import init_database
from backend.einvoicing.operator_choice import build_operator_client
from backend.einvoicing.operator_client import OperatorClient
from backend.email import messages
from backend.identity import secrets
from backend.logs import configure_logging, get_logger, register_secrets
from backend.onboarding.esign_client import EsignClient
from backend.onboarding.provider import SignatureProvider
from backend.onboarding.registry import CompanyRegistry
from backend.onboarding.registry_client import RegistryClient
from backend.printing import quota
from storage import Storage, build_storage

log = get_logger("boot")


def built_by(build: Callable[[Config], Any]) -> dict:
    """The metadata of a `Runtime` field holding an external client that `build(config)` makes."""
    return {"build": build}


@dataclass(frozen=True)
class Runtime:
    config: Config
    storage: Storage = field(metadata=built_by(build_storage))
    esign: SignatureProvider = field(metadata=built_by(EsignClient.from_config))
    operator: OperatorClient = field(metadata=built_by(build_operator_client))
    registry: CompanyRegistry = field(metadata=built_by(RegistryClient.from_config))

    def clients(self) -> dict[str, Any]:
        """Every external client by field name."""
        return {name: getattr(self, name) for name in client_names()}


def client_names() -> tuple[str, ...]:
    return tuple(f.name for f in fields(Runtime) if "build" in f.metadata)


def build_runtime(config: Config, **given: Any) -> Runtime:
    """The runtime of `config`: each client taken from `given` when there, else built."""
    unknown = set(given) - set(client_names())
    if unknown:
        raise TypeError(f"unknown client(s): {', '.join(sorted(unknown))}")
    built = {f.name: given[f.name] if given.get(f.name) is not None else f.metadata["build"](config)
             for f in fields(Runtime) if "build" in f.metadata}
    return Runtime(config=config, **built)


_current: Runtime | None = None


def current_runtime() -> Runtime | None:
    """The runtime this process booted with (None before boot).

    For composition roots only: the actors of the worker, the CLI, benchmarks and tests. A service
    receives the client or setting it needs as an argument.
    """
    return _current


def boot(config: Config | None = None, *, role: str, **clients: Any) -> Runtime:
    """Read the configuration (ConfigError stops the process), then set up logs, database, helper
    settings and the external clients (`clients` given by name replace the built ones).

    `DATABASE_URL` / `REDIS_URL` left unset mean the embedded servers of the data directory (in
    development only: `load_config` refuses `ENVIRONMENT=production` without them).
    Booting again (tests build several apps) keeps the database pool when the URL is unchanged.
    """
    global _current
    config = config or load_config()
    configure_logging(config.log_level)
    register_secrets(config.secrets())
    config = with_service_urls(config)
    if _current is None or _current.config != config:
        if not os.environ.get("VITRINE_SUPERVISOR"):  # the supervisor (`vitrine dev`, web, worker) said them once
            for warning in config.warnings:
                log.warning(warning)
        log.info("boot", extra={"fields": {"role": role, "settings": config.describe()}})
    if _current is None or _current.config.database_url != config.database_url:
        init_database(config.database_url)
    secrets.use_costs(time_cost=config.argon2_time_cost, memory_cost_kib=config.argon2_memory_cost_kib,
                      parallelism=config.argon2_parallelism)
    messages.use_links(public_base_url=config.public_base_url, platform_name=config.platform_name)
    quota.use_quota(config.upload_quota_bytes)
    books.use_fiscal_year_end(config.accounting_fiscal_year_end)
    _current = build_runtime(config, **clients)
    return _current


def with_service_urls(config: Config) -> Config:
    if config.database_url and config.redis_url:
        return config
    from backend.embedded import ensure_postgres, ensure_redis, runtime_url  # development default only

    if not config.database_url:  # the embedded server: its superuser owns, its runtime role runs
        owner_url = ensure_postgres(config.data_dir)
        config = replace(config, database_owner_url=owner_url, database_url=runtime_url(owner_url))
    return replace(config, redis_url=config.redis_url or ensure_redis(config.data_dir))
