"""Payouts and refunds pay accounts someone reviewed (API.md "Payouts and refunds only move money
received, to accounts reviewed"; docs/bank.md "Accounts reviewed, orders held").

`billing_profile_approved_account` keeps, apart from the live billing profile, the account an
admin approved at KYB: the IBAN and the holder's name of the profile as it was when the KYB was
approved (`backend.identity.bank_details`). Organizations approved before this migration get their
profile's values as approved (they were approved with them: an IBAN change reopened the review).

A payout or refund payment order records its creditor's account when it is made
(`creditor_iban`, `creditor_name`, `creditor_approved_at`: when that account was approved); the
credit transfer file pays that account, never the live profile. Orders made before this migration
get their organization's approved account, else the IBAN of the mandate they name.
"""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE billing_profile_approved_account (
            organization_id     varchar(64) PRIMARY KEY REFERENCES organization (id) ON DELETE CASCADE,
            iban                varchar(34),
            holder_name         varchar(200) NOT NULL,
            approved_at         timestamptz NOT NULL
        )
        """
    )
    migrator.sql(
        """
        INSERT INTO billing_profile_approved_account (organization_id, iban, holder_name, approved_at)
        SELECT o.id, p.iban, p.legal_name, COALESCE(o.kyb_reviewed_at, p.updated_at)
        FROM organization o JOIN billing_profile p ON p.organization_id = o.id
        WHERE o.kyb_status = 'approved'
        """
    )
    migrator.sql(
        """
        ALTER TABLE billing_payment_order
            ADD COLUMN creditor_iban        varchar(34),
            ADD COLUMN creditor_name        varchar(200),
            ADD COLUMN creditor_approved_at timestamptz
        """
    )
    migrator.sql(
        """
        UPDATE billing_payment_order o
        SET creditor_iban = COALESCE(a.iban, (SELECT m.iban FROM billing_sepa_mandate m
                                              WHERE m.mandate_ref = o.mandate_ref LIMIT 1)),
            creditor_name = a.holder_name, creditor_approved_at = a.approved_at
        FROM billing_profile_approved_account a
        WHERE a.organization_id = o.organization_id AND o.kind IN ('supplier_payout', 'refund')
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        ALTER TABLE billing_payment_order
            DROP COLUMN creditor_iban, DROP COLUMN creditor_name, DROP COLUMN creditor_approved_at
        """
    )
    migrator.sql("DROP TABLE billing_profile_approved_account")
