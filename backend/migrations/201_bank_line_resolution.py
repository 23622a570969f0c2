"""How an admin settled a statement line nothing matched, other than by matching it with a payment
order (docs/bank.md, "The unmatched queue"): `refunded` (the money went back to the payer: the
line is paired with the bank's debit line that paid it back, both leave `471` together) or
`applied` (a credit applied to a customer's invoice: `471` against the customer's `411`). One row
per line, never changed (append-only for the runtime role: `backend/database_roles.py`).
"""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE billing_bank_line_resolution (
            line_id       varchar(36) PRIMARY KEY REFERENCES billing_bank_line (id) ON DELETE RESTRICT,
            how           varchar(8) NOT NULL CHECK (how IN ('refunded', 'applied')),
            other_line_id varchar(36) REFERENCES billing_bank_line (id) ON DELETE RESTRICT,
            invoice_id    varchar(36) REFERENCES billing_invoice (id) ON DELETE RESTRICT,
            note          text NOT NULL CHECK (btrim(note) <> ''),
            user_id       varchar(36),
            created_at    timestamptz NOT NULL,
            CHECK ((how = 'refunded') = (other_line_id IS NOT NULL)),
            CHECK ((how = 'applied') = (invoice_id IS NOT NULL))
        )
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE billing_bank_line_resolution")
