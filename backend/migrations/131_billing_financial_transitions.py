"""Billing: the financial transition map, held by the database.

`billing_financial_transition` holds every move of a reservation's financial status (spec C's tree
completed by API.md "Money that always balances"); the rows are those of
`backend.billing.records.TRANSITION_MAP` (`tests/billing/test_financial_transitions.py` compares
them; a change of the map is a new migration). A trigger refuses any other change of
`billing_financial_record.financial_status` and any record opened at a status `draft` cannot
reach in one move.
"""

_ROWS = (
    ("draft", "deposit_due", "legacy deposit collection"),
    ("draft", "reservation_total_due", "reservation total collection (direct write)"),
    ("draft", "cancelled", "cancellation"),
    ("deposit_due", "deposit_paid", "deposit paid"),
    ("deposit_due", "cancelled", "cancellation"),
    ("deposit_paid", "balance_due", "legacy balance collection"),
    ("deposit_paid", "cancelled", "cancellation"),
    ("balance_due", "balance_paid", "balance paid"),
    ("balance_due", "cancelled", "cancellation"),
    ("reservation_total_due", "reservation_total_paid", "collection"),
    ("reservation_total_due", "cancelled", "cancellation"),
    ("reservation_total_paid", "partially_refunded", "partial refund"),
    ("reservation_total_paid", "fully_refunded", "refund of the whole sale"),
    ("reservation_total_paid", "cancelled", "credit note of the whole sale"),
    ("reservation_total_paid", "supplier_settlement_pending", "self-billing"),
    ("reservation_total_paid", "written_off", "write-off"),
    ("partially_refunded", "fully_refunded", "refund of the rest of the sale"),
    ("partially_refunded", "cancelled", "credit note of the rest of the sale"),
    ("partially_refunded", "supplier_settlement_pending", "self-billing of the store share left"),
    ("partially_refunded", "written_off", "write-off"),
    ("supplier_settlement_pending", "supplier_settlement_paid", "payout"),
    ("supplier_settlement_pending", "reservation_total_paid", "self-billed invoice credited in full"),
    ("supplier_settlement_pending", "partially_refunded", "self-billed invoice credited in full"),
    ("supplier_settlement_pending", "fully_refunded", "refund of the rest of a settled sale"),
    ("supplier_settlement_pending", "cancelled", "credit note of the rest of a settled sale"),
    ("supplier_settlement_paid", "reservation_total_paid", "self-billed invoice credited in full"),
    ("supplier_settlement_paid", "partially_refunded", "self-billed invoice credited in full"),
    ("supplier_settlement_paid", "fully_refunded", "refund of the rest of a settled sale"),
    ("supplier_settlement_paid", "cancelled", "credit note of the rest of a settled sale"),
)


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE billing_financial_transition (
            from_status varchar(40) NOT NULL,
            to_status   varchar(40) NOT NULL,
            trigger     text NOT NULL,
            PRIMARY KEY (from_status, to_status),
            CHECK (from_status <> to_status)
        )
        """
    )
    values = ", ".join("(%s, %s, %s)" for _ in _ROWS)
    migrator.sql(f"INSERT INTO billing_financial_transition VALUES {values}",  # noqa: S608 (placeholders only)
                 *[value for row in _ROWS for value in row])
    migrator.sql(
        """
        CREATE FUNCTION billing_financial_transition_allowed() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            previous varchar(40) := CASE TG_OP WHEN 'INSERT' THEN 'draft' ELSE OLD.financial_status END;
        BEGIN
            IF NEW.financial_status IS DISTINCT FROM previous AND NOT EXISTS (
                SELECT FROM billing_financial_transition
                 WHERE from_status = previous AND to_status = NEW.financial_status) THEN
                RAISE EXCEPTION 'financial status of reservation %%: %% -> %% is not in the transition map',
                    NEW.reservation_id, previous, NEW.financial_status USING ERRCODE = 'check_violation';
            END IF;
            RETURN NEW;
        END
        $$
        """
    )
    migrator.sql(
        """
        CREATE TRIGGER billing_financial_transition_allowed
        BEFORE INSERT OR UPDATE OF financial_status ON billing_financial_record
        FOR EACH ROW EXECUTE FUNCTION billing_financial_transition_allowed()
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TRIGGER billing_financial_transition_allowed ON billing_financial_record")
    migrator.sql("DROP FUNCTION billing_financial_transition_allowed()")
    migrator.sql("DROP TABLE billing_financial_transition")
