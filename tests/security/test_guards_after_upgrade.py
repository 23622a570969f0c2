"""The guards hold on a database migrated from the release before them, as on a fresh one: the
catalog check that `vitrine migrate` runs after granting (`catalog_problems`) finds nothing, and
fails when a guard is missing."""

from __future__ import annotations

import logging
import os

import psycopg2
import pytest
from peewee import DatabaseError, PostgresqlDatabase
from peewee_migrate import Router

from backend.database_roles import catalog_problems, current_role
from backend.db import database
from backend.embedded import RUNTIME_ROLE, ensure_database
from backend.migrate import MIGRATIONS_DIR, apply_migrations
from tests.conftest import _with_database

# The last migration of the release before the guards: a database of that release is upgraded.
PREVIOUS_RELEASE_HEAD = "164_print_order_tally"
RUNTIME = RUNTIME_ROLE  # the role the tests run as (tests/conftest.py)


def test_a_fresh_database_passes_the_catalog_check():
    assert catalog_problems(database, current_role(os.environ["DATABASE_URL"])) == []


@pytest.mark.owner
@pytest.mark.parametrize("breach, problem", [
    ("GRANT DELETE ON billing_payment_order TO {role}", "billing_payment_order: {role} holds"),
    ("GRANT UPDATE (total_cents) ON billing_financial_record TO {role}", "billing_financial_record: {role} updates"),
    ("GRANT UPDATE ON einvoice_transmission TO {role}", "einvoice_transmission: {role} holds"),
    ("GRANT TRIGGER ON reservation TO {role}", "reservation: {role} holds"),
    ("ALTER FUNCTION billing_status_move() RESET search_path", "function billing_status_move() has no fixed"),
    ("GRANT TEMPORARY ON DATABASE {database} TO {role}", "{role} may create temporary tables"),
])
def test_the_catalog_check_finds_a_missing_guard(breach, problem):
    (name,) = database.execute_sql("SELECT current_database()").fetchone()
    database.execute_sql(breach.format(database=f'"{name}"', role=RUNTIME))  # rolled back with the test
    assert [found for found in catalog_problems(database, RUNTIME) if found.startswith(problem.format(role=RUNTIME))]


@pytest.fixture
def previous_release():
    """A database of its own at the previous release's head, with the grants that release gave
    at worst (every row privilege, TEMPORARY) and rows its upgrade must carry: an organization
    whose legal name is a spreadsheet formula, a mandate signed before its sha256 was recorded."""
    owner_url = os.environ["DATABASE_OWNER_URL"]
    name = f"{psycopg2.extensions.parse_dsn(owner_url)['dbname']}_upgrade"
    ensure_database(owner_url, name, recreate=True)
    owner = PostgresqlDatabase(_with_database(owner_url, name))
    with owner.connection_context():
        Router(owner, migrate_dir=MIGRATIONS_DIR, logger=logging.getLogger("migrate")).run(PREVIOUS_RELEASE_HEAD)
        for statement in (
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {RUNTIME}",
            f'GRANT TEMPORARY ON DATABASE "{name}" TO {RUNTIME}',
            "INSERT INTO organization (id, actor_type, siren, legal_name)"
            " VALUES ('distributor:552100554', 'distributor', '552100554', '=HYPERLINK(\"http://x\")')",
            "INSERT INTO billing_self_billing_mandate (id, organization_id, status, esign_request_ref,"
            " document_storage_key, requested_at, signed_at) VALUES ('00000000-0000-4000-8000-000000000001',"
            " 'distributor:552100554', 'signed', 'req-1', 'distributor-552100554/m.pdf', now(), now())",
        ):
            owner.execute_sql(statement)
    yield _with_database(owner_url, name), _with_database(os.environ["DATABASE_URL"], name)
    admin = psycopg2.connect(owner_url)
    admin.autocommit = True
    try:
        with admin.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')
    finally:
        admin.close()


def test_a_database_of_the_previous_release_upgraded_holds_the_guards(previous_release):
    owner_url, runtime_url = previous_release
    done = apply_migrations(owner_url, runtime_role=RUNTIME)  # raises when the catalog check fails
    assert done[0] == sorted(name for name in Router(database, migrate_dir=MIGRATIONS_DIR).todo
                             if name > PREVIOUS_RELEASE_HEAD)[0]
    runtime = PostgresqlDatabase(runtime_url)
    with runtime.connection_context():
        assert catalog_problems(runtime, RUNTIME) == []
        for refused in ("DELETE FROM billing_self_billing_mandate", "DELETE FROM billing_payment_order",
                        "CREATE TEMP TABLE accounting_period_close (closed_until date)",
                        "UPDATE billing_financial_record SET total_cents = 0",
                        "UPDATE billing_self_billing_mandate SET status = 'pending_signature'"):
            with pytest.raises(DatabaseError) as refusal, runtime.atomic():
                runtime.execute_sql(refused)
            assert refusal.value.orig.pgcode in ("42501", "23514"), refused
        assert runtime.execute_sql("SELECT legal_name, document_sha256 FROM organization"
                                   " JOIN billing_self_billing_mandate m ON m.organization_id = organization.id"
                                   ).fetchone() == ('HYPERLINK("http://x")', None)
