"""Apply the versioned migrations under an advisory lock (two releases never race)."""

from __future__ import annotations

import logging
from pathlib import Path

from peewee_migrate import Router

from backend.database_roles import grant_runtime
from backend.db import database

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
_LOCK_KEY = 0x56495452  # "VITR"


def apply_migrations(*, runtime_role: str | None = None) -> list[str]:
    """Run every pending migration in order, each in its own transaction, as the owner; then give
    `runtime_role` (the processes' role, when it is not the owner) what it needs on every table
    (`backend.database_roles`). Returns the migrations' names."""
    router = Router(database, migrate_dir=MIGRATIONS_DIR, logger=logging.getLogger("migrate"))
    database.execute_sql("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
    try:
        done = router.run()
        if runtime_role:
            grant_runtime(database, runtime_role)
        return done
    finally:
        database.execute_sql("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))


def pending_migrations() -> list[str]:
    """The migrations not yet applied (all of them on an empty database)."""
    return list(Router(database, migrate_dir=MIGRATIONS_DIR, logger=logging.getLogger("migrate")).diff)
