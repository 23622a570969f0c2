"""Outbox rows are closed when their actor has done the work, not when Redis took them.

`done_at` is set by the worker, `dead_at` when the work was given up, `redeliver_at` says when a
handed-over row that is not done is handed over again. Rows sent before this migration are taken
as done (nothing can tell otherwise, and re-running all of them would be worse).
"""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        ALTER TABLE outbox_message
            ADD COLUMN redeliver_at timestamptz,
            ADD COLUMN done_at      timestamptz,
            ADD COLUMN dead_at      timestamptz
        """
    )
    migrator.sql("UPDATE outbox_message SET done_at = sent_at WHERE sent_at IS NOT NULL")
    migrator.sql(
        "CREATE INDEX outbox_message_not_done ON outbox_message (redeliver_at)"
        " WHERE sent_at IS NOT NULL AND done_at IS NULL AND dead_at IS NULL"
    )
    migrator.sql("DROP INDEX outbox_message_unsent")
    migrator.sql(
        "CREATE INDEX outbox_message_unsent ON outbox_message (created_at) WHERE sent_at IS NULL AND dead_at IS NULL"
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP INDEX outbox_message_not_done")
    migrator.sql("ALTER TABLE outbox_message DROP COLUMN redeliver_at, DROP COLUMN done_at, DROP COLUMN dead_at")
