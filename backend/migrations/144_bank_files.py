"""The bank: each payment order's settlement, and the files sent to the bank (issue 30).

A payment order keeps spec C's `status`; `settlement` is the bank's view of it (API.md "The bank"):
- `unsent`: in no live file (every order before this migration: no money moved at the bank then,
  so the first file run gathers those that are due);
- `in_file`: in a live bank file (`billing_bank_file_order`);
- `settled`: a bank statement booked it (`settled_on`, the booking date);
- `returned`: the bank returned it (an R-transaction: `return_code`, its ISO reason, `returned_on`).
Trigger `billing_payment_order_settlement_move` allows only the moves of `_MOVES`.

`billing_bank_file` is one pain.008 (direct debits) or pain.001 (credit transfers) message, stored
privately (`storage_key`, `sha256`): its content never changes; only its `status` may go from `live`
to `void` (a file the bank refused, its orders free to go in another). `billing_bank_file_order`
links each order to its file; the link row carries its file's kind and status through a composite
foreign key (`ON UPDATE CASCADE`), so a partial unique index holds "each payment order is in at
most one live file" and a CHECK holds "a direct debit has its sequence type (FRST/RCUR)".
"""

# (from, to, why): the settlement moves the trigger allows.
_MOVES = (
    ("unsent", "in_file", "put in a bank file"),
    ("in_file", "unsent", "its file voided"),
    ("in_file", "settled", "booked on a statement"),
    ("unsent", "settled", "a transfer by the payer booked on a statement, or matched by hand"),
    ("in_file", "returned", "returned by the bank (R-transaction)"),
    ("settled", "returned", "returned by the bank after its booking"),
)


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        ALTER TABLE billing_payment_order
            ADD COLUMN settlement  varchar(20) NOT NULL DEFAULT 'unsent'
                CONSTRAINT billing_payment_order_settlement
                CHECK (settlement IN ('unsent', 'in_file', 'settled', 'returned')),
            ADD COLUMN settled_on  date,
            ADD COLUMN returned_on date,
            ADD COLUMN return_code varchar(4) CHECK (return_code ~ '^[A-Z0-9]{4}$'),
            ADD CONSTRAINT billing_payment_order_settled CHECK (settlement <> 'settled' OR settled_on IS NOT NULL),
            ADD CONSTRAINT billing_payment_order_returned
                CHECK ((settlement = 'returned') = (return_code IS NOT NULL AND returned_on IS NOT NULL))
        """
    )
    moves = " OR ".join(f"(OLD.settlement = '{a}' AND NEW.settlement = '{b}')" for a, b, _ in _MOVES)
    migrator.sql(
        f"""
        CREATE FUNCTION billing_payment_order_settlement_move() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.settlement IS DISTINCT FROM OLD.settlement AND NOT ({moves}) THEN
                RAISE EXCEPTION 'payment order %%: settlement %% -> %% is not allowed',
                    NEW.id, OLD.settlement, NEW.settlement USING ERRCODE = 'check_violation';
            END IF;
            RETURN NEW;
        END
        $$
        """
    )
    migrator.sql(
        """
        CREATE TRIGGER billing_payment_order_settlement_move
        BEFORE UPDATE OF settlement ON billing_payment_order
        FOR EACH ROW EXECUTE FUNCTION billing_payment_order_settlement_move()
        """
    )
    migrator.sql(
        "CREATE INDEX billing_payment_order_unsent ON billing_payment_order (method, kind)"
        " WHERE settlement = 'unsent'"
    )
    migrator.sql(
        """
        CREATE TABLE billing_bank_file (
            id                 varchar(36) PRIMARY KEY,
            kind               varchar(20) NOT NULL CHECK (kind IN ('direct_debit', 'credit_transfer')),
            message_id         varchar(35) NOT NULL UNIQUE CHECK (message_id ~ '^[A-Za-z0-9-]{1,35}$'),
            count              integer NOT NULL CHECK (count > 0),
            control_sum_cents  bigint NOT NULL CHECK (control_sum_cents > 0),
            requested_on       date NOT NULL,
            storage_key        text NOT NULL UNIQUE,
            sha256             varchar(64) NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
            status             varchar(10) NOT NULL DEFAULT 'live' CHECK (status IN ('live', 'void')),
            voided_at          timestamptz,
            void_reason        text,
            created_by_user_id varchar(36),
            created_at         timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT billing_bank_file_void CHECK ((status = 'void') = (voided_at IS NOT NULL)),
            CONSTRAINT billing_bank_file_kind_status UNIQUE (id, kind, status)
        )
        """
    )
    migrator.sql("CREATE INDEX billing_bank_file_created ON billing_bank_file (created_at DESC, id DESC)")
    migrator.sql(
        """
        CREATE FUNCTION billing_bank_file_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'DELETE' OR OLD.status = 'void'
               OR (NEW.id, NEW.kind, NEW.message_id, NEW.count, NEW.control_sum_cents, NEW.requested_on,
                   NEW.storage_key, NEW.sha256, NEW.created_by_user_id, NEW.created_at)
                  IS DISTINCT FROM
                  (OLD.id, OLD.kind, OLD.message_id, OLD.count, OLD.control_sum_cents, OLD.requested_on,
                   OLD.storage_key, OLD.sha256, OLD.created_by_user_id, OLD.created_at) THEN
                RAISE EXCEPTION 'bank file %%: a file never changes and is never deleted (only a live one is voided)',
                    OLD.message_id USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN NEW;
        END
        $$
        """
    )
    migrator.sql(
        """
        CREATE TRIGGER billing_bank_file_immutable BEFORE UPDATE OR DELETE ON billing_bank_file
        FOR EACH ROW EXECUTE FUNCTION billing_bank_file_immutable()
        """
    )
    migrator.sql(
        """
        CREATE TABLE billing_bank_file_order (
            file_id          varchar(36) NOT NULL,
            file_kind        varchar(20) NOT NULL,
            file_status      varchar(10) NOT NULL DEFAULT 'live',
            payment_order_id varchar(36) NOT NULL REFERENCES billing_payment_order (id) ON DELETE RESTRICT,
            amount_cents     bigint NOT NULL CHECK (amount_cents > 0),
            sequence_type    varchar(4) CHECK (sequence_type IN ('FRST', 'RCUR')),
            PRIMARY KEY (file_id, payment_order_id),
            CONSTRAINT billing_bank_file_order_file FOREIGN KEY (file_id, file_kind, file_status)
                REFERENCES billing_bank_file (id, kind, status) ON UPDATE CASCADE ON DELETE RESTRICT,
            CONSTRAINT billing_bank_file_order_sequence
                CHECK ((file_kind = 'direct_debit') = (sequence_type IS NOT NULL))
        )
        """
    )
    migrator.sql(
        "CREATE UNIQUE INDEX billing_bank_file_order_one_live ON billing_bank_file_order (payment_order_id)"
        " WHERE file_status = 'live'"
    )
    migrator.sql("CREATE INDEX billing_bank_file_order_order ON billing_bank_file_order (payment_order_id)")


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE billing_bank_file_order")
    migrator.sql("DROP TRIGGER billing_bank_file_immutable ON billing_bank_file")
    migrator.sql("DROP FUNCTION billing_bank_file_immutable()")
    migrator.sql("DROP TABLE billing_bank_file")
    migrator.sql("DROP INDEX billing_payment_order_unsent")
    migrator.sql("DROP TRIGGER billing_payment_order_settlement_move ON billing_payment_order")
    migrator.sql("DROP FUNCTION billing_payment_order_settlement_move()")
    migrator.sql(
        "ALTER TABLE billing_payment_order DROP COLUMN settlement, DROP COLUMN settled_on,"
        " DROP COLUMN returned_on, DROP COLUMN return_code"
    )
