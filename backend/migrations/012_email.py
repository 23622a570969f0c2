"""Outgoing e-mail messages (sent by the `deliver_email` actor)."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE email_message (
            id          varchar(36) PRIMARY KEY,
            template    varchar(60) NOT NULL,
            to_address  varchar(320) NOT NULL,
            subject     varchar(300) NOT NULL,
            body_text   text,
            status      varchar(40) NOT NULL DEFAULT 'queued' CHECK (status IN ('queued','sent')),
            attempts    integer NOT NULL DEFAULT 0,
            last_error  text,
            created_at  timestamptz NOT NULL DEFAULT now(),
            sent_at     timestamptz
        )
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE email_message")
