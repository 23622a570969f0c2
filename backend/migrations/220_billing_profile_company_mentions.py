"""The company mentions of a billing profile (Code de commerce, art. R123-237; docs/invoices.md
"The document rules"): `legal_form`, `share_capital_cents` and `registration` (the register, the
city of its registry and the SIREN, in the normal form `RCS Paris 901 234 567`). Optional: a
profile written before them keeps working, and the admin's KYB review shows them missing.
"""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        ALTER TABLE billing_profile
            ADD COLUMN legal_form varchar(60),
            ADD COLUMN share_capital_cents bigint CHECK (share_capital_cents > 0),
            ADD COLUMN registration varchar(200)
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE billing_profile DROP COLUMN legal_form, DROP COLUMN share_capital_cents, "
                 "DROP COLUMN registration")
