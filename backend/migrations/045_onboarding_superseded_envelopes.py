"""Onboarding envelopes superseded by a newer one: the provider cancel still owed for their
request, and when the reconciliation pass last asked the provider about an envelope."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        ALTER TABLE onboarding_signature_request
            ADD COLUMN provider_cancel_due boolean NOT NULL DEFAULT false,
            ADD COLUMN reconciled_at timestamptz
        """
    )
    migrator.sql(
        "CREATE INDEX onboarding_signature_request_cancel_due ON onboarding_signature_request (organization_id) "
        "WHERE provider_cancel_due"
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP INDEX onboarding_signature_request_cancel_due")
    migrator.sql(
        "ALTER TABLE onboarding_signature_request DROP COLUMN provider_cancel_due, DROP COLUMN reconciled_at")
