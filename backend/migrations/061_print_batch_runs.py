"""Printing: runs of a batch status advance (the counters are read from here) and the outcome of
each order, written once (a redelivered message never advances an order twice)."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE print_batch_status_run (
            id             varchar(36) PRIMARY KEY,
            batch_id       varchar(36) NOT NULL REFERENCES print_order_batch (id) ON DELETE CASCADE,
            next_status    varchar(40) NOT NULL,
            actor_user_id  varchar(36) REFERENCES app_user (id) ON DELETE SET NULL,
            group_size     integer NOT NULL CHECK (group_size > 0),
            groups_total   integer NOT NULL CHECK (groups_total >= 0),
            current_group  integer NOT NULL DEFAULT 0,
            status         varchar(20) NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'done')),
            advanced       integer NOT NULL DEFAULT 0,
            skipped        integer NOT NULL DEFAULT 0,
            failed         integer NOT NULL DEFAULT 0,
            created_at     timestamptz NOT NULL DEFAULT now(),
            finished_at    timestamptz,
            CONSTRAINT print_batch_status_run_done CHECK (status = 'running' OR finished_at IS NOT NULL)
        )
        """
    )
    migrator.sql("CREATE INDEX print_batch_status_run_batch ON print_batch_status_run (batch_id, created_at DESC)")
    migrator.sql(
        """
        CREATE TABLE print_batch_status_run_item (
            id            bigserial PRIMARY KEY,
            run_id        varchar(36) NOT NULL REFERENCES print_batch_status_run (id) ON DELETE CASCADE,
            order_id      varchar(36) NOT NULL REFERENCES print_order (id) ON DELETE CASCADE,
            group_index   integer NOT NULL CHECK (group_index >= 0),
            outcome       varchar(20) CHECK (outcome IN ('advanced', 'skipped', 'failed')),
            error_code    varchar(60),
            error_message text,
            settled_at    timestamptz,
            CONSTRAINT print_batch_status_run_item_key UNIQUE (run_id, order_id),
            CONSTRAINT print_batch_status_run_item_settled CHECK ((outcome IS NULL) = (settled_at IS NULL))
        )
        """
    )
    migrator.sql("CREATE INDEX print_batch_status_run_item_group ON print_batch_status_run_item (run_id, group_index)")


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE print_batch_status_run_item, print_batch_status_run")
