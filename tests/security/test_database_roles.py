"""The processes' database role cannot rewrite the books; the owner cannot truncate them; one URL
still works and warns. The reproductions of the review that connected as the runtime role (a
temporary table fooling a guard; money and legal rows deleted or rewritten) are each refused."""

from __future__ import annotations

import os
import re

import psycopg2
import pytest
from peewee import DatabaseError

from backend.config import ONE_DATABASE_ROLE, load_config
from backend.database_roles import DELETABLE, RESTRICTED, grant_statements, privileges
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
    # a temporary table shadowing what a guard reads (a closed period, the financial transitions)
    "CREATE TEMP TABLE accounting_period_close (closed_until date)",
    "CREATE TEMP TABLE billing_financial_transition (from_status text, to_status text)",
    # money and legal rows are never deleted, nor their amounts and parties rewritten
    "DELETE FROM billing_payment_order",
    "DELETE FROM billing_financial_record",
    "DELETE FROM einvoice_transmission",
    "DELETE FROM einvoice_lifecycle_event",
    "DELETE FROM billing_self_billed_acceptance",
    "DELETE FROM billing_self_billing_mandate",
    "DELETE FROM billing_document_mailing",
    "DELETE FROM billing_sepa_mandate",
    "DELETE FROM accounting_entry_counter",
    "UPDATE billing_payment_order SET amount_cents = 0",
    "UPDATE billing_payment_order SET organization_id = organization_id",
    "UPDATE billing_self_billing_mandate SET signer = '{}'",
    "UPDATE billing_document_mailing SET recipients = '{}'",
    "UPDATE einvoice_lifecycle_event SET code = code",
    "UPDATE billing_status_transition SET to_status = to_status",
    "INSERT INTO billing_status_transition VALUES ('billing_invoice', 'paid', 'issued')",
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
        assert delete == (privileges(name) is None), name


def test_the_catalog_no_record_deletable_no_function_without_its_search_path_no_temporary():
    """Over whatever the migrations made: no table of money or legal records the runtime role may
    delete from (the expiring idempotent answers and the billing profiles aside), no function of
    the schema without a fixed search path, no TEMPORARY on the database."""
    deletable = [name for (name,) in database.execute_sql(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        " AND (tablename LIKE 'billing\\_%%' OR tablename LIKE 'accounting\\_%%' OR tablename LIKE 'einvoice\\_%%')"
        " AND has_table_privilege(current_user, quote_ident(tablename), 'DELETE')").fetchall()]
    assert sorted(deletable) == sorted(DELETABLE)
    unfixed = [name for (name,) in database.execute_sql(
        "SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
        " WHERE n.nspname = 'public' AND NOT EXISTS (SELECT FROM unnest(coalesce(p.proconfig, '{}')) c"
        "   WHERE c = 'search_path=pg_catalog, public, pg_temp')").fetchall()]
    assert unfixed == []
    assert database.execute_sql("SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
                                " WHERE n.nspname = 'public'").fetchone()[0] > 20  # the guards are there
    (temporary,) = database.execute_sql(
        "SELECT has_database_privilege(current_user, current_database(), 'TEMPORARY')").fetchone()
    assert temporary is False


def test_no_guard_reads_a_table_by_an_unqualified_name():
    """A guard names `public.<table>`: with a search path that put `pg_temp` first, a temporary
    table of the same name could not stand in for it either."""
    tables = "|".join(name for (name,) in database.execute_sql(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall())
    loose = [name for name, body in database.execute_sql(
        "SELECT p.proname, p.prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
        " WHERE n.nspname = 'public'").fetchall()
        if re.search(rf"\b(FROM|JOIN|INTO|UPDATE)\s+({tables})\b", body, re.IGNORECASE)]
    assert loose == []


@pytest.mark.owner  # the owner may still create a temporary table: the guard ignores it all the same
def test_a_temporary_period_close_does_not_reopen_a_closed_period():
    (before,) = database.execute_sql("SELECT accounting_closed_until()").fetchone()
    database.execute_sql("CREATE TEMP TABLE accounting_period_close (closed_until date) ON COMMIT DROP")
    database.execute_sql("INSERT INTO pg_temp.accounting_period_close VALUES ('1900-01-01')")
    database.execute_sql("CREATE TEMP TABLE billing_financial_transition (from_status text, to_status text)"
                         " ON COMMIT DROP")
    database.execute_sql("INSERT INTO pg_temp.billing_financial_transition"
                         " VALUES ('supplier_settlement_paid', 'supplier_settlement_pending')")
    database.execute_sql("SET LOCAL search_path = pg_temp, public")
    assert database.execute_sql("SELECT accounting_closed_until()").fetchone() == (before,)
    (moves,) = database.execute_sql(
        "SELECT count(*) FROM billing_financial_transition WHERE to_status = 'supplier_settlement_pending'"
        " AND from_status = 'supplier_settlement_paid'").fetchone()
    assert moves == 1  # the session sees its own table; the trigger below reads the schema's
    functions = dict(database.execute_sql(
        "SELECT proname, prosrc FROM pg_proc WHERE proname IN"
        " ('billing_financial_transition_allowed', 'accounting_closed_until')").fetchall())
    assert all("public." in body for body in functions.values()), functions


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
