"""Accounting: closing a period waits for the postings in flight, for the runtime role too.

`LOCK TABLE accounting_entry IN SHARE MODE` needs UPDATE, DELETE or TRUNCATE on the table, which
the runtime role never holds (the books are append-only for it: `backend/database_roles.py`).
`accounting_lock_for_close()` takes that lock as the owner (SECURITY DEFINER, a fixed search
path); the lock lasts until the caller's transaction ends.
"""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE FUNCTION accounting_lock_for_close() RETURNS void
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
        BEGIN
            LOCK TABLE accounting_entry IN SHARE MODE;
        END
        $$
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP FUNCTION accounting_lock_for_close()")
