"""The books are never truncated: a `BEFORE TRUNCATE` trigger on issued invoices, the ledger and the
audit trails refuses it, whoever asks (the runtime role holds no TRUNCATE privilege either; this
stops the owner, and the one role of a one-URL deployment). A `TRUNCATE ... CASCADE` reaching them
from a table they reference is refused too."""

PROTECTED = ("billing_invoice", "billing_ledger_entry", "billing_audit_entry", "security_audit_event",
             "einvoice_transmission_event")


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE FUNCTION refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION '%% is never truncated', TG_TABLE_NAME USING ERRCODE = 'integrity_constraint_violation';
        END
        $$
        """
    )
    for table in PROTECTED:
        migrator.sql(f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}"
                     " FOR EACH STATEMENT EXECUTE FUNCTION refuse_truncate()")


def rollback(migrator, database, fake=False, **kwargs):
    for table in PROTECTED:
        migrator.sql(f"DROP TRIGGER {table}_no_truncate ON {table}")
    migrator.sql("DROP FUNCTION refuse_truncate()")
