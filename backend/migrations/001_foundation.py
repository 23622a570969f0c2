"""Foundation: the outbox."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE outbox_message (
            id          bigserial PRIMARY KEY,
            actor_name  varchar(120) NOT NULL,
            args        jsonb NOT NULL DEFAULT '[]'::jsonb,
            request_id  varchar(128),
            created_at  timestamptz NOT NULL DEFAULT now(),
            sent_at     timestamptz,
            attempts    integer NOT NULL DEFAULT 0,
            last_error  text
        )
        """
    )
    migrator.sql(
        "CREATE INDEX outbox_message_unsent ON outbox_message (created_at) WHERE sent_at IS NULL"
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE outbox_message")
