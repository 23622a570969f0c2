"""The bank: statements in (camt.053 / camt.054), their lines, returned debits, overdue reminders.

- `billing_bank_statement`: one imported document, unique per account and statement (or
  notification) id, so the same document twice is imported once; its counts as answered.
- `billing_bank_line`: one booked entry (or one transaction of a batch-booked entry), unique per
  account and the bank's reference of the entry, so an entry a camt.054 notified and the end of
  day camt.053 repeats is matched once. `state` is `matched` (it settled `payment_order_id`),
  `returned` (it returned that direct debit) or `unmatched` (it waits in the admin queue). A
  payment order is settled by at most one line and returned by at most one line (partial unique
  indexes).
- `billing_sepa_mandate.retries_stopped_at`: set by the second return of a mandate within 90 days;
  the retry pass no longer collects the reservations it returned (an admin decides).
- `billing_bank_transfer_reminder`: the one reminder e-mail of an overdue bank transfer.
- The transition `reservation_total_paid -> reservation_total_due` (a returned direct debit) joins
  migration 131's map (`backend.billing.records.TRANSITION_MAP`).
"""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE billing_bank_statement (
            id                  varchar(36) PRIMARY KEY,
            kind                varchar(8) NOT NULL CHECK (kind IN ('camt.053', 'camt.054')),
            message_id          varchar(35) NOT NULL,
            statement_id        varchar(35) NOT NULL,
            account_iban        varchar(34) NOT NULL,
            document_sha256     char(64) NOT NULL,
            line_count          integer NOT NULL CHECK (line_count >= 0),
            matched             integer NOT NULL CHECK (matched >= 0),
            returned            integer NOT NULL CHECK (returned >= 0),
            unmatched           integer NOT NULL CHECK (unmatched >= 0),
            imported_by_user_id varchar(36),
            created_at          timestamptz NOT NULL,
            UNIQUE (account_iban, kind, statement_id),
            CHECK (matched + returned + unmatched = line_count)
        )
        """
    )
    migrator.sql(
        """
        CREATE TABLE billing_bank_line (
            id                 varchar(36) PRIMARY KEY,
            statement_id       varchar(36) NOT NULL REFERENCES billing_bank_statement (id) ON DELETE RESTRICT,
            account_iban       varchar(34) NOT NULL,
            entry_key          varchar(140) NOT NULL,
            direction          varchar(6) NOT NULL CHECK (direction IN ('credit', 'debit')),
            amount_cents       bigint NOT NULL CHECK (amount_cents > 0),
            booking_date       date NOT NULL,
            end_to_end_id      varchar(35),
            remittance         text,
            counterparty_name  varchar(140),
            counterparty_iban  varchar(34),
            return_code        varchar(4),
            state              varchar(9) NOT NULL CHECK (state IN ('matched', 'returned', 'unmatched')),
            payment_order_id   varchar(36) REFERENCES billing_payment_order (id) ON DELETE RESTRICT,
            matched_by_user_id varchar(36),
            matched_at         timestamptz,
            created_at         timestamptz NOT NULL,
            UNIQUE (account_iban, entry_key),
            CHECK ((state = 'unmatched') = (payment_order_id IS NULL)),
            CHECK (state <> 'returned' OR (direction = 'debit' AND return_code IS NOT NULL))
        )
        """
    )
    migrator.sql("CREATE UNIQUE INDEX billing_bank_line_settles_once ON billing_bank_line (payment_order_id)"
                 " WHERE state = 'matched'")
    migrator.sql("CREATE UNIQUE INDEX billing_bank_line_returns_once ON billing_bank_line (payment_order_id)"
                 " WHERE state = 'returned'")
    migrator.sql("CREATE INDEX billing_bank_line_unmatched ON billing_bank_line (booking_date, id)"
                 " WHERE state = 'unmatched'")
    migrator.sql("CREATE INDEX billing_bank_line_statement ON billing_bank_line (statement_id)")
    migrator.sql("ALTER TABLE billing_sepa_mandate ADD COLUMN retries_stopped_at timestamptz")
    migrator.sql(
        """
        CREATE TABLE billing_bank_transfer_reminder (
            payment_order_id varchar(36) PRIMARY KEY REFERENCES billing_payment_order (id) ON DELETE RESTRICT,
            email            varchar(320) NOT NULL,
            created_at       timestamptz NOT NULL
        )
        """
    )
    migrator.sql("INSERT INTO billing_financial_transition VALUES"
                 " ('reservation_total_paid', 'reservation_total_due', 'returned direct debit')")


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DELETE FROM billing_financial_transition"
                 " WHERE from_status = 'reservation_total_paid' AND to_status = 'reservation_total_due'")
    migrator.sql("DROP TABLE billing_bank_transfer_reminder")
    migrator.sql("ALTER TABLE billing_sepa_mandate DROP COLUMN retries_stopped_at")
    migrator.sql("DROP TABLE billing_bank_line")
    migrator.sql("DROP TABLE billing_bank_statement")
