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
    # What the distributor and the admin decided never changes: a decision only leaves `pending`, a
    # contest's reason stays, a resolution is written once; the e-mails of a mailing are set once.
    migrator.sql(
        """
        CREATE FUNCTION billing_self_billed_acceptance_guard() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.invoice_id <> OLD.invoice_id OR NEW.organization_id <> OLD.organization_id
               OR (OLD.status <> 'pending' AND NEW.status <> OLD.status)
               OR (OLD.decided_at IS NOT NULL AND NEW.decided_at IS DISTINCT FROM OLD.decided_at)
               OR (OLD.contested_at IS NOT NULL AND (NEW.contested_at IS DISTINCT FROM OLD.contested_at
                   OR NEW.contest_reason IS DISTINCT FROM OLD.contest_reason))
               OR (OLD.resolution IS NOT NULL AND (NEW.resolution IS DISTINCT FROM OLD.resolution
                   OR NEW.resolution_note IS DISTINCT FROM OLD.resolution_note
                   OR NEW.resolved_at IS DISTINCT FROM OLD.resolved_at
                   OR NEW.corrected_invoice_id IS DISTINCT FROM OLD.corrected_invoice_id)) THEN
                RAISE EXCEPTION 'billing_self_billed_acceptance %%: a decision or a resolution never changes',
                    OLD.invoice_id USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN NEW;
        END
        $$
        """
    )
    migrator.sql("CREATE TRIGGER billing_self_billed_acceptance_guard BEFORE UPDATE ON billing_self_billed_acceptance"
                 " FOR EACH ROW EXECUTE FUNCTION billing_self_billed_acceptance_guard()")
    migrator.sql(
        """
        CREATE FUNCTION billing_document_mailing_once() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.invoice_id <> OLD.invoice_id OR cardinality(OLD.email_message_ids) > 0 THEN
                RAISE EXCEPTION 'billing_document_mailing %%: a document is e-mailed once', OLD.invoice_id
                    USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN NEW;
        END
        $$
        """
    )
    migrator.sql("CREATE TRIGGER billing_document_mailing_once BEFORE UPDATE ON billing_document_mailing"
                 " FOR EACH ROW EXECUTE FUNCTION billing_document_mailing_once()")
    migrator.sql(
        """
        INSERT INTO billing_self_billed_acceptance (invoice_id, organization_id)
        SELECT id, issuer_organization_id FROM billing_invoice
        WHERE kind = 'supplier_self_billed' AND status <> 'credited' AND issuer_organization_id IS NOT NULL
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE billing_self_billed_acceptance")
    migrator.sql("DROP FUNCTION billing_self_billed_acceptance_guard()")
    migrator.sql("DROP TABLE billing_document_mailing")
    migrator.sql("DROP FUNCTION billing_document_mailing_once()")
    migrator.sql("ALTER TABLE billing_profile DROP COLUMN billing_email")
    migrator.sql("DROP TABLE email_attachment")
