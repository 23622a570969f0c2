"""The callbacks of an AFNOR XP Z12-013 platform (annex A, `WebhookCallbackContent`), stored once
per flow state (`event_key`: the flow's id and its `updatedAt`) with their processing status, like
the e-signature provider's webhook events."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE einvoice_platform_callback (
            id                  bigserial PRIMARY KEY,
            event_key           varchar(200) NOT NULL UNIQUE,
            flow_id             varchar(200) NOT NULL,
            payload             jsonb NOT NULL,
            processing_status   varchar(40) NOT NULL DEFAULT 'received'
                                CHECK (processing_status IN ('received', 'processed', 'ignored')),
            processing_note     text,
            received_at         timestamptz NOT NULL DEFAULT now(),
            processed_at        timestamptz
        )
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE einvoice_platform_callback")
