"""Two database roles: the owner migrates, the runtime role (web, worker, clock) only reads and
writes rows.

The owner (`DATABASE_OWNER_URL`, used by `vitrine migrate` and the release phase) owns every
table, function and trigger. The runtime role (`DATABASE_URL`) owns nothing, so it can neither
change the schema nor `ALTER TABLE ... DISABLE TRIGGER`, and holds no TRUNCATE, TRIGGER or
REFERENCES privilege. After every migration run, `grant_runtime` gives it the rows of every table
of the schema (a table a new migration creates is covered with no step of its own) except what
`RESTRICTED` takes away: the frozen columns of issued invoices, and the append-only journals and
audit trails, which it may only read and add to. A new append-only table, or a new invoice column
the runtime updates, is a line here.

With one URL (one role that owns everything: a small deployment), nothing is granted, every
process keeps working, and boot warns (`backend.config`).
"""

from __future__ import annotations

import psycopg2
from psycopg2 import sql

# The privileges of the runtime role on the tables that are not plain rows; every other table of
# the schema gets SELECT, INSERT, UPDATE, DELETE.
RESTRICTED: dict[str, str] = {
    # an issued invoice never changes: only its status, PDF and payment move
    "billing_invoice": "SELECT, INSERT, UPDATE (status, pdf_storage_key, pdf_sha256, paid_at, updated_at)",
    "billing_ledger_entry": "SELECT, INSERT",  # the journal before the books: read only, kept readable
    # the books: entries, their lines and lettering are only added to (a correction is a new entry)
    "accounting_entry": "SELECT, INSERT",
    "accounting_line": "SELECT, INSERT",
    "accounting_lettering": "SELECT, INSERT",
    "accounting_lettered_line": "SELECT, INSERT",
    "accounting_period_close": "SELECT, INSERT",
    "billing_audit_entry": "SELECT, INSERT",
    # a bank file never changes: a live one may only be voided; its orders are only added (migration 144)
    "billing_bank_file": "SELECT, INSERT, UPDATE (status, voided_at, void_reason)",
    "billing_bank_file_order": "SELECT, INSERT",
    # what distributors owe back and what payouts kept back of it: only added to (migration 130)
    "billing_supplier_debt": "SELECT, INSERT",
    # the financial status transition map, reference data written by migration 131
    "billing_financial_transition": "SELECT",
    "security_audit_event": "SELECT, INSERT",
    "einvoice_transmission_event": "SELECT, INSERT",  # written by the transmission's trigger
    "print_order_tally": "SELECT",  # the orders' counts, kept by their triggers (migration 164)
    "migratehistory": "SELECT",  # commands check that the database is migrated
}


def current_role(url: str) -> str:
    """The role a connection URL signs in as (libpq's defaults included)."""
    connection = psycopg2.connect(url, connect_timeout=5)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_user")
            return cursor.fetchone()[0]
    finally:
        connection.close()


def runtime_role(*, owner_url: str | None, runtime_url: str) -> str | None:
    """The runtime role to grant to, or None when there is one role (no owner URL, or the same role)."""
    if not owner_url:
        return None
    role = current_role(runtime_url)
    return None if role == current_role(owner_url) else role


def grant_statements(role: str, tables: list[str]) -> list[sql.Composable]:
    """What `role` holds after a migration run, from nothing: earlier grants are revoked first, so a
    table that became restricted loses what it had."""
    who = sql.Identifier(role)
    statements: list[sql.Composable] = [
        sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(who),
        sql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {}").format(who),
        sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {}").format(who),
        sql.SQL("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {}").format(who),
    ]
    for table in tables:
        if table in RESTRICTED:
            statements += [
                sql.SQL("REVOKE ALL ON {} FROM {}").format(sql.Identifier(table), who),
                sql.SQL("GRANT " + RESTRICTED[table] + " ON {} TO {}").format(sql.Identifier(table), who),
            ]
    return statements


def grant_runtime(database, role: str) -> None:
    """Give `role` the rows it needs, on the owner's connection `database`, in one transaction."""
    tables = [name for (name,) in database.execute_sql(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()]
    with database.atomic():
        for statement in grant_statements(role, tables):
            database.execute_sql(statement.as_string(database.connection()))
