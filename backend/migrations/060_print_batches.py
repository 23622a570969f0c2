"""Printing: print batches (one deposit for many reservations of a campaign sharing a furniture
type) and the links from orders, preflights and reused faces to them."""


def migrate(migrator, database, fake=False, **kwargs):
    # 051 named the index of `print_order.batch_id` like the table this migration creates.
    migrator.sql("ALTER INDEX print_order_batch RENAME TO print_order_batch_id")
    # Codes LOT-0001... come from a sequence, drawn only when a confirmation creates orders.
    migrator.sql("CREATE SEQUENCE print_batch_code_seq")
    migrator.sql(
        """
        CREATE TABLE print_order_batch (
            id                         varchar(36) PRIMARY KEY,
            code                       varchar(20) CONSTRAINT print_order_batch_code_key UNIQUE
                                       CHECK (code ~ '^LOT-[0-9]{4,}$'),
            organization_id            varchar(60) NOT NULL REFERENCES organization (id) ON DELETE RESTRICT,
            campaign_id                varchar(36) NOT NULL REFERENCES campaign (id) ON DELETE RESTRICT,
            promo_furniture_type_id    varchar(36) NOT NULL REFERENCES furniture_type (id) ON DELETE RESTRICT,
            furniture_type_version_id  varchar(36) NOT NULL
                                       REFERENCES furniture_type_version (id) ON DELETE RESTRICT,
            printer_organization_id    varchar(60) REFERENCES organization (id) ON DELETE RESTRICT,
            -- Spec B: only `draft` and `sent` are ever written; the CHECK keeps it so.
            status                     varchar(20) NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'sent')),
            delivery_target            varchar(20) NOT NULL DEFAULT 'store'
                                       CHECK (delivery_target IN ('store', 'single_address', 'none')),
            created_by_user_id         varchar(36) REFERENCES app_user (id) ON DELETE SET NULL,
            created_at                 timestamptz NOT NULL DEFAULT now(),
            updated_at                 timestamptz NOT NULL DEFAULT now(),
            sent_at                    timestamptz,
            CONSTRAINT print_order_batch_sent CHECK (
                status = 'draft' OR (code IS NOT NULL AND sent_at IS NOT NULL AND printer_organization_id IS NOT NULL))
        )
        """
    )
    # Opening a draft is idempotent per (organization, campaign, furniture type) while it is a
    # draft; sent batches do not count.
    migrator.sql(
        "CREATE UNIQUE INDEX print_order_batch_one_draft ON print_order_batch"
        " (organization_id, campaign_id, promo_furniture_type_id) WHERE status = 'draft'"
    )
    migrator.sql(
        "CREATE INDEX print_order_batch_printer ON print_order_batch (printer_organization_id, updated_at DESC)"
        " WHERE status = 'sent'"
    )
    migrator.sql("CREATE INDEX print_order_batch_campaign ON print_order_batch (campaign_id, updated_at DESC)")
    migrator.sql(
        "ALTER TABLE print_order ADD CONSTRAINT print_order_batch_fkey"
        " FOREIGN KEY (batch_id) REFERENCES print_order_batch (id) ON DELETE RESTRICT"
    )
    migrator.sql(
        "ALTER TABLE print_preflight ADD CONSTRAINT print_preflight_batch_fkey"
        " FOREIGN KEY (batch_id) REFERENCES print_order_batch (id) ON DELETE CASCADE"
    )
    migrator.sql(
        "ALTER TABLE print_reused_face ADD CONSTRAINT print_reused_face_batch_fkey"
        " FOREIGN KEY (batch_id) REFERENCES print_order_batch (id) ON DELETE SET NULL"
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE print_reused_face DROP CONSTRAINT print_reused_face_batch_fkey")
    migrator.sql("ALTER TABLE print_preflight DROP CONSTRAINT print_preflight_batch_fkey")
    migrator.sql("ALTER TABLE print_order DROP CONSTRAINT print_order_batch_fkey")
    migrator.sql("DROP TABLE print_order_batch")
    migrator.sql("DROP SEQUENCE print_batch_code_seq")
    migrator.sql("ALTER INDEX print_order_batch_id RENAME TO print_order_batch")
