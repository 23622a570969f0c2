"""The VAT number of a billing profile holds one of any member state (docs/invoices.md, "Reverse
charge"): the Dutch, Swedish and Lithuanian ones are a character longer than a French one.
"""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE billing_profile ALTER COLUMN vat_number TYPE varchar(14)")


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE billing_profile ALTER COLUMN vat_number TYPE varchar(13)")
