"""What the company registry said when an onboarding envelope was opened: whether it could be
asked (`registry_checked`), and the check itself (`registry_check`: the representative matched,
the extract's date, the reviewer's warnings, or why the registry could not answer). Envelopes
opened before the registry was read keep `registry_checked = false` and no check."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        ALTER TABLE onboarding_signature_request
            ADD COLUMN registry_checked boolean NOT NULL DEFAULT false,
            ADD COLUMN registry_check   jsonb CHECK (registry_check IS NULL OR jsonb_typeof(registry_check) = 'object')
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql(
        "ALTER TABLE onboarding_signature_request DROP COLUMN registry_check, DROP COLUMN registry_checked"
    )
