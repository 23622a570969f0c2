"""Apply the versioned migrations under an advisory lock (two releases never race)."""

from __future__ import annotations

import logging
from pathlib import Path

from peewee_migrate import Router

from backend.db import database

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
_LOCK_KEY = 0x56495452  # "VITR"


def apply_migrations() -> list[str]:
    """Run every pending migration in order, each in its own transaction; returns their names."""
    router = Router(database, migrate_dir=MIGRATIONS_DIR, logger=logging.getLogger("migrate"))
    database.execute_sql("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
    try:
        return router.run()
    finally:
        database.execute_sql("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))


def pending_migrations() -> list[str]:
    """The migrations not yet applied (all of them on an empty database)."""
    return list(Router(database, migrate_dir=MIGRATIONS_DIR, logger=logging.getLogger("migrate")).diff)
