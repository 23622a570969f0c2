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

No row of money or legal records (`billing_*`, `accounting_*`, `einvoice_*`) is ever deleted by
the runtime role: a row that must go is marked (a self-billing mandate draft is `abandoned`); the
stored idempotent answers, which expire, and the organizations' billing profiles (identity, not
records) are the exceptions (`DELETABLE`). The statuses of invoices, self-billing and SEPA
mandates, reservation incidents, financial records, payment settlements and e-invoice
transmissions move only along their transition tables (triggers), and `RESTRICTED` names the
columns a state change writes: the code saves those columns only (`Model.update(...)`,
`save(only=[...])`), never a whole row.

After granting, `grant_runtime` reads the catalog back (`catalog_problems`) and refuses to finish
while it shows a guard missing, on a fresh database as on one migrated from an earlier release.

`harden` runs after every migration run, whatever the roles: every function of the schema gets a
fixed `search_path` (`pg_catalog, public, pg_temp`: a temporary table never shadows a table a
guard reads; `pg_temp` left out would be searched first), and nobody but the owner may create
temporary tables (`REVOKE TEMPORARY ... FROM PUBLIC`).

A one-off repair that rewrites what the runtime role may not (the legacy recovery re-prices a
never-billed financial record) runs in `owner_session`, on the owner's connection.

With one URL (one role that owns everything: a small deployment), nothing is granted, every
process keeps working, and boot warns (`backend.config`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg2
from psycopg2 import sql

from backend import db

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
    "billing_bank_line_resolution": "SELECT, INSERT",  # how an admin settled a waiting line (migration 201)
    # what the bank booked never changes: a line is matched by hand once, its statement's counts follow
    "billing_bank_line": "SELECT, INSERT, UPDATE (state, payment_order_id, matched_by_user_id, matched_at)",
    "billing_bank_statement": "SELECT, INSERT, UPDATE (matched, returned, unmatched)",
    # what distributors owe back and what payouts kept back of it: only added to (migration 130)
    "billing_supplier_debt": "SELECT, INSERT",
    # the financial status transition map, reference data written by migration 131
    "billing_financial_transition": "SELECT",
    # a payment order's amount, kind and party never change; its status and settlement move, and an
    # admin may refresh a held order's creditor account from the newly approved profile
    "billing_payment_order": "SELECT, INSERT, UPDATE (invoice_id, status, paid_at, failure_code, failure_message,"
                             " settlement, settled_on, returned_on, return_code, updated_at, creditor_iban,"
                             " creditor_name, creditor_bic, creditor_approved_at)",
    "billing_self_billing_mandate": "SELECT, INSERT, UPDATE (status, esign_request_ref, requested_at, signed_at,"
                                    " document_storage_key, document_sha256, declined_at, decline_reason,"
                                    " revoked_at, revoked_by_user_id, revoke_reason, abandoned_at, updated_at)",
    "billing_document_mailing": "SELECT, INSERT, UPDATE (email_message_ids)",
    # a reservation's frozen amounts and billing model never change: its status and refunds move
    # (the legacy recovery that re-prices a never-billed record runs as the owner)
    "billing_financial_record": "SELECT, INSERT, UPDATE (financial_status, refunded_excl_tax_cents, updated_at)",
    # the distributor's decision and the admin's resolution, each set once (their trigger)
    "billing_self_billed_acceptance": "SELECT, INSERT, UPDATE (status, decided_at, decided_by_user_id,"
                                      " contest_reason, contested_at, contested_by_user_id, resolution,"
                                      " resolution_note, resolved_at, resolved_by_user_id, corrected_invoice_id)",
    # a SEPA mandate's reference, IBAN and signature never change: it is ended, its retries stopped
    "billing_sepa_mandate": "SELECT, INSERT, UPDATE (status, ended_at, end_reason, retries_stopped_at)",
    # a transmission's invoice, kind, flow, amount, buyer and file never change: its dispatch and
    # the operator's answers move (the lifecycle trigger writes the latest lifecycle status)
    "einvoice_transmission": "SELECT, INSERT, UPDATE (status, provider_status, provider_flow_id, operator_status,"
                             " dispatch_attempts, dispatch_claimed_at, last_error_code, last_error_message,"
                             " last_synced_at, next_dispatch_at, lifecycle_code, lifecycle_at, updated_at,"
                             " status_changed_at)",
    # an incident's reservation, reason and declarant never change: it is released, once
    "billing_reservation_incident": "SELECT, INSERT, UPDATE (status, resolution_note, released_by_user_id,"
                                    " released_at, updated_at)",
    # a status the platform reports (a payment, a decision): its invoice, code, amounts and reason
    # never change; its sending moves
    "einvoice_payment_report": "SELECT, INSERT, UPDATE (status, provider_flow_id, attempts, last_error_message,"
                               " sent_at)",
    "einvoice_decision_report": "SELECT, INSERT, UPDATE (status, provider_flow_id, attempts, last_error_message,"
                                " sent_at)",
    "billing_status_transition": "SELECT",  # the legal status moves, reference data (migration 186)
    "einvoice_lifecycle_event": "SELECT, INSERT",  # what the platform reported: only added to
    # a platform's callback as received: only its processing moves
    "einvoice_platform_callback": "SELECT, INSERT, UPDATE (processing_status, processing_note, processed_at)",
    "legal_text_cleaning": "SELECT",  # what migration 187 changed in legal names and addresses
    "security_audit_event": "SELECT, INSERT",
    "einvoice_transmission_event": "SELECT, INSERT",  # written by the transmission's trigger
    "print_order_tally": "SELECT",  # the orders' counts, kept by their triggers (migration 164)
    "migratehistory": "SELECT",  # commands check that the database is migrated
}

# The tables of money and legal records: the runtime role never deletes their rows.
RECORDS = ("billing_", "accounting_", "einvoice_")
DELETABLE = frozenset({
    "billing_idempotency_record",  # stored idempotent answers expire
    # an organization's billing identity, not a record (an issued invoice holds its own copy of the
    # parties): a squatted organization given back loses the squatter's profile
    "billing_profile",
})
SEARCH_PATH = "pg_catalog, public, pg_temp"


def privileges(table: str) -> str | None:
    """What the runtime role holds on `table` beyond plain rows, None for plain rows."""
    if table in RESTRICTED:
        return RESTRICTED[table]
    if table.startswith(RECORDS) and table not in DELETABLE:
        return "SELECT, INSERT, UPDATE"
    return None


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
        granted = privileges(table)
        if granted is not None:
            statements += [
                sql.SQL("REVOKE ALL ON {} FROM {}").format(sql.Identifier(table), who),
                sql.SQL("GRANT " + granted + " ON {} TO {}").format(sql.Identifier(table), who),
            ]
    return statements


def hardening_statements(database_name: str, functions: list[str], role: str | None) -> list[sql.Composable]:
    """Every function (its identity `name(args)`) with a fixed search path; no temporary table
    for anyone but the owner (PUBLIC, and the runtime role when there is one)."""
    statements: list[sql.Composable] = [
        sql.SQL("ALTER FUNCTION {} SET search_path = " + SEARCH_PATH).format(sql.SQL(function))
        for function in functions]
    statements.append(sql.SQL("REVOKE TEMPORARY ON DATABASE {} FROM PUBLIC").format(sql.Identifier(database_name)))
    if role:
        statements.append(sql.SQL("REVOKE TEMPORARY ON DATABASE {} FROM {}").format(
            sql.Identifier(database_name), sql.Identifier(role)))
    return statements


def _unfixed_functions(database) -> list[str]:
    """The functions of the schema (their identity `name(args)`; an extension's aside) without the
    fixed search path."""
    return [identity for (identity,) in database.execute_sql(
        "SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
        " WHERE n.nspname = 'public' AND p.prokind IN ('f', 'p') AND NOT EXISTS ("
        "   SELECT FROM unnest(coalesce(p.proconfig, '{}')) c WHERE c = %s)"
        " AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')",
        ("search_path=" + SEARCH_PATH,)).fetchall()]


def harden(database, role: str | None) -> None:
    """On the owner's connection `database`, after the migrations: fixed search paths, no
    `TEMPORARY` (see the module's docstring)."""
    functions = _unfixed_functions(database)
    (name,) = database.execute_sql("SELECT current_database()").fetchone()
    with database.atomic():
        for statement in hardening_statements(name, functions, role):
            database.execute_sql(statement.as_string(database.connection()))


def grant_runtime(database, role: str) -> None:
    """Give `role` the rows it needs, on the owner's connection `database`, in one transaction,
    which fails (nothing granted) when the catalog then shows a guard missing."""
    tables = [name for (name,) in database.execute_sql(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()]
    with database.atomic():
        for statement in grant_statements(role, tables):
            database.execute_sql(statement.as_string(database.connection()))
        problems = catalog_problems(database, role)
        if problems:
            raise RuntimeError("the database guards do not hold: " + "; ".join(problems))


def _declared(table: str) -> tuple[set[str], set[str] | None]:
    """What `privileges` declares for `table`: its table-wide privileges, and the columns of its
    column-level UPDATE (None without one)."""
    granted = privileges(table) or "SELECT, INSERT, UPDATE, DELETE"
    columns = re.search(r"UPDATE \(([^)]*)\)", granted)
    whole = re.sub(r"UPDATE \([^)]*\)", "", granted)
    return ({name.strip() for name in whole.split(",") if name.strip()},
            {name.strip() for name in columns.group(1).split(",")} if columns else None)


def catalog_problems(database, role: str) -> list[str]:
    """What the catalog shows against the guards for `role` (empty when they hold): a table whose
    privileges differ from the declared ones (a DELETE on a record, an UPDATE of a column no state
    change writes, TRUNCATE, TRIGGER or REFERENCES), a function of the schema without the fixed
    search path, TEMPORARY on the database. Read on any connection: the privileges are `role`'s."""
    problems = []
    rows = database.execute_sql(
        "SELECT c.relname, array_remove(ARRAY["
        "   CASE WHEN has_table_privilege(%(role)s, c.oid, 'SELECT') THEN 'SELECT' END,"
        "   CASE WHEN has_table_privilege(%(role)s, c.oid, 'INSERT') THEN 'INSERT' END,"
        "   CASE WHEN has_table_privilege(%(role)s, c.oid, 'UPDATE') THEN 'UPDATE' END,"
        "   CASE WHEN has_table_privilege(%(role)s, c.oid, 'DELETE') THEN 'DELETE' END,"
        "   CASE WHEN has_table_privilege(%(role)s, c.oid, 'TRUNCATE') THEN 'TRUNCATE' END,"
        "   CASE WHEN has_table_privilege(%(role)s, c.oid, 'TRIGGER') THEN 'TRIGGER' END,"
        "   CASE WHEN has_table_privilege(%(role)s, c.oid, 'REFERENCES') THEN 'REFERENCES' END], NULL),"
        " ARRAY(SELECT a.attname::text FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0"
        "   AND NOT a.attisdropped AND has_column_privilege(%(role)s, c.oid, a.attnum, 'UPDATE'))"
        " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')", {"role": role}).fetchall()
    for table, held, updatable in rows:
        whole, columns = _declared(table)
        if set(held) != whole:
            problems.append(f"{table}: {role} holds {', '.join(sorted(held)) or 'nothing'},"
                            f" not {', '.join(sorted(whole))}")
        elif columns is not None and set(updatable) != columns:
            problems.append(f"{table}: {role} updates {', '.join(sorted(updatable)) or 'no column'},"
                            f" not {', '.join(sorted(columns))}")
    problems += [f"function {identity} has no fixed search path" for identity in _unfixed_functions(database)]
    (temporary,) = database.execute_sql(
        "SELECT has_database_privilege(%s, current_database(), 'TEMPORARY')", (role,)).fetchone()
    if temporary:
        problems.append(f"{role} may create temporary tables")
    return problems


@contextmanager
def owner_session(owner_url: str | None) -> Iterator[None]:
    """A connection for the block on the owner's role (a one-off repair of what the runtime role
    may not write), the proxy given back to the runtime's pool after it; with one URL (no owner
    URL), on the runtime's own pool."""
    runtime = db.database.obj
    owner = db.init_database(owner_url, max_connections=1) if owner_url else None
    try:
        with db.database.connection_context():
            yield
    finally:
        if owner is not None:
            owner.close_all()
            db.database.initialize(runtime)
