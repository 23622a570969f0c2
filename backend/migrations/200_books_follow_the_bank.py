"""The books follow the bank (docs/accounting.md, "The books follow the bank").

- `accounting_entry.bank_line_id`: the statement line an entry books (the money moved at the bank:
  a payment order booked, a debit returned, a line put in the waiting account `471`), so that `512`
  is read against the statements line by line (`vitrine accounting verify`, the bank
  reconciliation).
- `billing_bank_statement.opening_balance_cents`, `closing_balance_cents`, `closing_date`: a
  camt.053's booked balances (signed, in cents) and the day of its closing balance; NULL for a
  camt.054, which states none. An import checks that a statement opens on the balance the last
  one closed on.
"""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE accounting_entry ADD COLUMN bank_line_id varchar(36)"
                 " REFERENCES billing_bank_line (id) ON DELETE RESTRICT")
    migrator.sql("CREATE INDEX accounting_entry_bank_line ON accounting_entry (bank_line_id)"
                 " WHERE bank_line_id IS NOT NULL")
    migrator.sql("ALTER TABLE billing_bank_statement ADD COLUMN opening_balance_cents bigint,"
                 " ADD COLUMN closing_balance_cents bigint, ADD COLUMN closing_date date")


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE billing_bank_statement DROP COLUMN opening_balance_cents,"
                 " DROP COLUMN closing_balance_cents, DROP COLUMN closing_date")
    migrator.sql("DROP INDEX accounting_entry_bank_line")
    migrator.sql("ALTER TABLE accounting_entry DROP COLUMN bank_line_id")
