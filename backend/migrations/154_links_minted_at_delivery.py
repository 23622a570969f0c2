"""E-mailed single-use links are minted when the e-mail is delivered (issue 34 point 12;
docs/identity.md "E-mail"): until then the message keeps a placeholder and names the row that
will hold the token's digest (`link_kind`, `link_ref`), and that row holds no digest at all.
A message whose link was used, burned or expired before delivery is `withdrawn` (not sent)."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE auth_token ALTER COLUMN token_hash DROP NOT NULL")
    migrator.sql("ALTER TABLE invitation ALTER COLUMN token_hash DROP NOT NULL")
    migrator.sql(
        """
        ALTER TABLE email_message
            ADD COLUMN link_kind varchar(20) CHECK (link_kind IN ('auth_token', 'invitation')),
            ADD COLUMN link_ref varchar(36),
            ADD CONSTRAINT email_message_link_ref CHECK ((link_kind IS NULL) = (link_ref IS NULL)),
            DROP CONSTRAINT email_message_status_check,
            ADD CONSTRAINT email_message_status_check CHECK (status IN ('queued', 'sent', 'withdrawn'))
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DELETE FROM email_message WHERE status = 'withdrawn' OR link_kind IS NOT NULL")
    migrator.sql(
        """
        ALTER TABLE email_message
            DROP CONSTRAINT email_message_status_check,
            ADD CONSTRAINT email_message_status_check CHECK (status IN ('queued', 'sent')),
            DROP COLUMN link_ref,
            DROP COLUMN link_kind
        """
    )
    migrator.sql("DELETE FROM invitation WHERE token_hash IS NULL")
    migrator.sql("ALTER TABLE invitation ALTER COLUMN token_hash SET NOT NULL")
    migrator.sql("DELETE FROM auth_token WHERE token_hash IS NULL")
    migrator.sql("ALTER TABLE auth_token ALTER COLUMN token_hash SET NOT NULL")
