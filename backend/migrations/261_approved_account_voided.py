"""An approved account voided when its organization is given back after squatting (API.md
"Payouts and refunds only move money received, to accounts reviewed"; docs/bank.md).

`billing_profile_approved_account.voided_at`: when an admin handed the organization to its
rightful owner (`backend.identity.squatting`); the account the squatter had approved is no longer
paid (its IBAN and BIC are cleared), and the payouts and refunds that recorded an account approved
before that moment are held back until an admin gives them the account approved since. A later
approval keeps `voided_at`: it is what tells those orders apart.
"""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE billing_profile_approved_account ADD COLUMN voided_at timestamptz")


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE billing_profile_approved_account DROP COLUMN voided_at")
