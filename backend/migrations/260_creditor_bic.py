"""The BIC of an account, beside its IBAN (API.md "Payouts and refunds only move money received, to
accounts reviewed": a payout or refund records its creditor's IBAN, BIC and name).

`billing_profile.bic`: the BIC of the bank holding the profile's IBAN, optional (an IBAN-only
transfer is valid SEPA); `billing_profile_approved_account.bic`: the one approved with the IBAN at
KYB; `billing_payment_order.creditor_bic`: the one a payout or refund recorded when it was made, the
credit transfer's creditor agent. Nothing to carry over: no profile held a BIC before.
"""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE billing_profile ADD COLUMN bic varchar(11)")
    migrator.sql("ALTER TABLE billing_profile_approved_account ADD COLUMN bic varchar(11)")
    migrator.sql("ALTER TABLE billing_payment_order ADD COLUMN creditor_bic varchar(11)")


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE billing_payment_order DROP COLUMN creditor_bic")
    migrator.sql("ALTER TABLE billing_profile_approved_account DROP COLUMN bic")
    migrator.sql("ALTER TABLE billing_profile DROP COLUMN bic")
