"""Apply the versioned migrations under an advisory lock (two releases never race)."""

from __future__ import annotations

import logging
from pathlib import Path

from peewee import PostgresqlDatabase
from peewee_migrate import Router

from backend.database_roles import grant_runtime, harden
from backend.db import database

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
_LOCK_KEY = 0x56495452  # "VITR"


def apply_migrations(owner_url: str | None = None, *, runtime_role: str | None = None) -> list[str]:
    """Run every pending migration in order, each in its own transaction, as the owner (a connection
    of its own to `owner_url`; without it, the process's database, whose connection the caller
    opened); then harden the functions and the database, and give `runtime_role` (the processes'
    role, when it is not the owner) what it needs on every table (`backend.database_roles`).
    Returns the migrations' names."""
    if owner_url is None:
        return _apply(database, runtime_role)
    owner = PostgresqlDatabase(owner_url)  # libpq expands a URI given as dbname
    with owner.connection_context():
        return _apply(owner, runtime_role)


def _apply(db, runtime_role: str | None) -> list[str]:
    router = Router(db, migrate_dir=MIGRATIONS_DIR, logger=logging.getLogger("migrate"))
    db.execute_sql("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
    try:
        done = router.run()
        harden(db, runtime_role)
        if runtime_role:
            grant_runtime(db, runtime_role)
        return done
    finally:
        db.execute_sql("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))


def pending_migrations() -> list[str]:
    """The migrations not yet applied (all of them on an empty database). Read-only: the runtime
    role checks it, which may not create the history table peewee-migrate's `diff` would."""
    done = set()
    if database.table_exists("migratehistory"):  # peewee-migrate's history table
        done = {name for (name,) in database.execute_sql("SELECT name FROM migratehistory")}
    return [name for name in Router(database, migrate_dir=MIGRATIONS_DIR).todo if name not in done]
