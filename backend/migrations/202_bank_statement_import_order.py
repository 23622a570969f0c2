"""`billing_bank_statement.import_seq`: the order statements were imported in, which a statement's
opening balance is checked against (the last one imported) and `vitrine accounting verify` walks.
The import time alone does not tell two imports of the same instant apart.
"""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE billing_bank_statement ADD COLUMN import_seq bigserial")
    migrator.sql("CREATE UNIQUE INDEX billing_bank_statement_import_seq ON billing_bank_statement (import_seq)")


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE billing_bank_statement DROP COLUMN import_seq")
