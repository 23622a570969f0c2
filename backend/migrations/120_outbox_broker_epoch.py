"""The broker's epoch: what the platform knows of the Redis it hands outbox rows to.

`outbox_broker_epoch` holds, per broker namespace (one in production), the marker last written
to the broker's Redis (a random token and the Redis run id it was written on).
`outbox_broker_loss` records each time that Redis was found to have lost data (marker gone,
another platform's marker, or a restart from a snapshot only) and what was handed over again;
`/api/metrics` counts its rows.
"""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE outbox_broker_epoch (
            namespace     varchar(120) PRIMARY KEY,
            token         varchar(64) NOT NULL,
            redis_run_id  varchar(64) NOT NULL,
            written_at    timestamptz NOT NULL
        )
        """
    )
    migrator.sql(
        """
        CREATE TABLE outbox_broker_loss (
            id             bigserial PRIMARY KEY,
            detected_at    timestamptz NOT NULL,
            reason         varchar(40) NOT NULL
                           CHECK (reason IN ('marker_missing', 'other_epoch', 'restarted_from_snapshot')),
            namespace      varchar(120) NOT NULL,
            redis_run_id   varchar(64) NOT NULL,
            redelivered    integer NOT NULL CHECK (redelivered >= 0),
            unsent_resent  integer NOT NULL CHECK (unsent_resent >= 0),
            detected_by    varchar(120) NOT NULL
        )
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE outbox_broker_loss")
    migrator.sql("DROP TABLE outbox_broker_epoch")
