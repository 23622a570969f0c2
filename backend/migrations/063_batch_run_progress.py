"""Printing: a batch status advance records when it last moved (`progressed_at`), so the clock can
resume a run whose messages died, and a batch has at most one running advance."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        "ALTER TABLE print_batch_status_run ADD COLUMN progressed_at timestamptz NOT NULL DEFAULT now()")
    # Runs left running beside a newer one of the same batch can never be resumed meaningfully.
    migrator.sql(
        """
        UPDATE print_batch_status_run SET status = 'done', finished_at = now()
         WHERE status = 'running' AND id NOT IN (
               SELECT DISTINCT ON (batch_id) id FROM print_batch_status_run
                WHERE status = 'running' ORDER BY batch_id, created_at DESC, id DESC)
        """
    )
    migrator.sql(
        "CREATE UNIQUE INDEX print_batch_status_run_one_running ON print_batch_status_run (batch_id) "
        "WHERE status = 'running'"
    )
    migrator.sql(
        "CREATE INDEX print_batch_status_run_progress ON print_batch_status_run (progressed_at) "
        "WHERE status = 'running'"
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP INDEX print_batch_status_run_progress")
    migrator.sql("DROP INDEX print_batch_status_run_one_running")
    migrator.sql("ALTER TABLE print_batch_status_run DROP COLUMN progressed_at")
