"""Documents e-mailed to the people they concern, and the distributor's acceptance of each
self-billed invoice (issue 32; docs/billing.md "Documents by e-mail", "Acceptance").

- `email_attachment`: a file an outbox e-mail carries, by reference to its stored object (context
  and key) and never by its bytes; its size is bounded here and checked again when it is sent.
- `billing_profile.billing_email`: where an organization's invoices go (else its managers).
- `billing_document_mailing`: one row per invoice or credit note e-mailed (its primary key is the
  document: a redelivered job sends nothing more) and the e-mails it made.
- `billing_self_billed_acceptance`: one row per self-billed invoice: `pending` until the
  distributor accepts or contests it, or until the daily pass records tacit acceptance 30 days
  after it was e-mailed; a contest stays `contested` and waits for an admin's resolution
  (`rejected` or `adjusted`, the latter naming the corrected invoice). Live self-billed invoices
  issued before this migration start `pending`.
"""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE email_attachment (
            id varchar(36) PRIMARY KEY,
            email_message_id varchar(36) NOT NULL REFERENCES email_message (id) ON DELETE CASCADE,
            storage_context varchar(80) NOT NULL,
            storage_key varchar(300) NOT NULL,
            filename varchar(200) NOT NULL CHECK (filename ~ '^[A-Za-z0-9._-]+$'),
            content_type varchar(100) NOT NULL,
            size_bytes bigint NOT NULL CHECK (size_bytes BETWEEN 1 AND 10485760)
        )
        """
    )
    migrator.sql("CREATE INDEX email_attachment_message ON email_attachment (email_message_id)")
    migrator.sql("ALTER TABLE billing_profile ADD COLUMN billing_email varchar(320)")
    migrator.sql(
        """
        CREATE TABLE billing_document_mailing (
            invoice_id varchar(36) PRIMARY KEY REFERENCES billing_invoice (id) ON DELETE RESTRICT,
            email_message_ids varchar(36)[] NOT NULL,
            recipients varchar(320)[] NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    migrator.sql(
        """
        CREATE TABLE billing_self_billed_acceptance (
            invoice_id varchar(36) PRIMARY KEY REFERENCES billing_invoice (id) ON DELETE RESTRICT,
            organization_id varchar(64) NOT NULL,
            status varchar(20) NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'accepted', 'contested', 'tacitly_accepted')),
            decided_at timestamptz,
            decided_by_user_id varchar(36),
            contest_reason text CHECK (char_length(contest_reason) BETWEEN 1 AND 2000),
            contested_at timestamptz,
            contested_by_user_id varchar(36),
            resolution varchar(10) CHECK (resolution IN ('rejected', 'adjusted')),
            resolution_note text CHECK (char_length(resolution_note) BETWEEN 1 AND 2000),
            resolved_at timestamptz,
            resolved_by_user_id varchar(36),
            corrected_invoice_id varchar(36) REFERENCES billing_invoice (id) ON DELETE RESTRICT,
            created_at timestamptz NOT NULL DEFAULT now(),
            CHECK ((status = 'contested') = (contested_at IS NOT NULL AND contest_reason IS NOT NULL)),
            CHECK (resolution IS NULL OR status = 'contested'),
            CHECK ((resolution IS NOT NULL) = (resolved_at IS NOT NULL AND resolution_note IS NOT NULL)),
            CHECK ((resolution = 'adjusted') = (corrected_invoice_id IS NOT NULL)
                   OR resolution IS NULL AND corrected_invoice_id IS NULL)
        )
        """
    )
    migrator.sql("CREATE INDEX billing_self_billed_acceptance_open ON billing_self_billed_acceptance (status)"
                 " WHERE status IN ('pending', 'contested')")
    migrator.sql(
        """
        INSERT INTO billing_self_billed_acceptance (invoice_id, organization_id)
        SELECT id, issuer_organization_id FROM billing_invoice
        WHERE kind = 'supplier_self_billed' AND status <> 'credited' AND issuer_organization_id IS NOT NULL
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE billing_self_billed_acceptance")
    migrator.sql("DROP TABLE billing_document_mailing")
    migrator.sql("ALTER TABLE billing_profile DROP COLUMN billing_email")
    migrator.sql("DROP TABLE email_attachment")
