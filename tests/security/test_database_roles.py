"""The processes' database role cannot rewrite the books; the owner cannot truncate them; one URL
still works and warns."""

from __future__ import annotations

import os

import psycopg2
import pytest
from peewee import DatabaseError

from backend.config import ONE_DATABASE_ROLE, load_config
from backend.database_roles import RESTRICTED, grant_statements
from backend.db import database, transaction
from ops.config_check import summary

REFUSED_TO_THE_RUNTIME = [
    "TRUNCATE billing_invoice",
    "TRUNCATE reservation CASCADE",
    "ALTER TABLE billing_invoice DISABLE TRIGGER billing_invoice_immutable",
    "ALTER TABLE billing_ledger_entry DISABLE TRIGGER USER",
    "DROP TRIGGER security_audit_event_append_only ON security_audit_event",
    "CREATE TRIGGER sneaky BEFORE UPDATE ON billing_invoice FOR EACH ROW EXECUTE FUNCTION refuse_truncate()",
    "UPDATE billing_invoice SET amount_excl_tax_cents = 0",
    "UPDATE billing_invoice SET lines = '[]', number = number",
    "DELETE FROM billing_invoice",
    "UPDATE billing_ledger_entry SET amount_cents = 0",
    "DELETE FROM billing_ledger_entry",
    "DELETE FROM billing_audit_entry",
    "DELETE FROM security_audit_event",
    "DELETE FROM einvoice_transmission_event",
    "DELETE FROM migratehistory",
    "CREATE TABLE shadow (id int)",
    "CREATE FUNCTION shadow() RETURNS int LANGUAGE sql AS 'SELECT 1'",
]


def _refused(statement: str) -> str:
    with pytest.raises(DatabaseError) as refusal, transaction():  # a savepoint: the test goes on
        database.execute_sql(statement)
    return getattr(refusal.value.orig, "pgcode", "") or str(refusal.value)


@pytest.mark.parametrize("statement", REFUSED_TO_THE_RUNTIME)
def test_the_runtime_role_cannot_rewrite_the_books(statement):
    assert _refused(statement) in ("42501", "42P17")  # insufficient_privilege / must be owner


def test_the_runtime_role_moves_what_may_move():
    """What the services do: an invoice's status, PDF and payment; rows added to the journals."""
    database.execute_sql("UPDATE billing_invoice SET status = status, pdf_storage_key = pdf_storage_key,"
                         " paid_at = paid_at, updated_at = updated_at WHERE false")
    database.execute_sql("INSERT INTO billing_audit_entry (action, reason) SELECT 'x', 'y' WHERE false")
    database.execute_sql("DELETE FROM billing_idempotency_record WHERE false")


def test_every_table_is_granted_and_the_restricted_ones_only_so_much():
    rows = database.execute_sql(
        "SELECT tablename, has_table_privilege(current_user, quote_ident(tablename), 'SELECT'),"
        " has_table_privilege(current_user, quote_ident(tablename), 'DELETE'),"
        " has_table_privilege(current_user, quote_ident(tablename), 'TRUNCATE, TRIGGER, REFERENCES')"
        " FROM pg_tables WHERE schemaname = 'public'").fetchall()
    assert {name for name, *_ in rows} >= set(RESTRICTED)
    for name, select, delete, owner_things in rows:
        assert select and not owner_things, name
        assert delete == (name not in RESTRICTED), name


def test_the_owner_cannot_truncate_the_books_either():
    with psycopg2.connect(os.environ["DATABASE_OWNER_URL"]) as owner, owner.cursor() as cursor:
        for table in ("billing_invoice", "billing_ledger_entry", "billing_audit_entry", "security_audit_event"):
            cursor.execute("SAVEPOINT s")
            with pytest.raises(psycopg2.errors.IntegrityConstraintViolation, match="never truncated"):
                cursor.execute(f"TRUNCATE {table} CASCADE")
            cursor.execute("ROLLBACK TO SAVEPOINT s")
        owner.rollback()
    owner.close()


def test_a_table_a_new_migration_creates_is_granted_by_the_step_after_migrating():
    statements = " ".join(str(s) for s in grant_statements("vitrine_app", ["new_table", "billing_invoice"]))
    assert "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public" in statements
    assert "REVOKE ALL ON ALL TABLES IN SCHEMA public" in statements  # a table restricted later loses rights


@pytest.mark.parametrize("environ, warned", [
    ({"DATABASE_URL": "postgresql://app@db/vitrine"}, True),
    ({"DATABASE_URL": "postgresql://app@db/vitrine", "DATABASE_OWNER_URL": "postgresql://app@db/vitrine"}, True),
    ({"DATABASE_URL": "postgresql://app@db/vitrine", "DATABASE_OWNER_URL": "postgresql://owner@db/vitrine"}, False),
    ({}, False),  # the embedded server makes both roles
])
def test_one_database_role_is_warned_at_boot_and_by_config_check(environ, warned):
    config = load_config(environ)
    assert (ONE_DATABASE_ROLE in config.warnings) is warned
    assert any("DATABASE_OWNER_URL" in line for line in summary(config)) is warned
