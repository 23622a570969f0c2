"""Billing: an `Idempotency-Key` held by a statement that fails when another request holds it.

`billing_hold_idempotency_key(lock)` takes the key's transaction-level advisory lock without
waiting and raises `lock_not_available` (55P03) when it is held: a flow can then send it and its
first read in one round trip (`BEGIN; SELECT billing_hold_idempotency_key(...); EXECUTE ...`),
the read being a later statement of the string, so that it sees what the key's last holder
committed; the refusal stops the string before the read.
"""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE FUNCTION billing_hold_idempotency_key(lock bigint) RETURNS void LANGUAGE plpgsql AS $$
        BEGIN
            IF NOT pg_try_advisory_xact_lock(lock) THEN
                RAISE EXCEPTION 'a request with this Idempotency-Key is still in flight'
                    USING ERRCODE = 'lock_not_available';
            END IF;
        END
        $$
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP FUNCTION billing_hold_idempotency_key(bigint)")
