"""Printing: deposits of visuals (preflights, reused faces), the deposit status of reservations
and the delivery recipient frozen on each print order."""

IMPRESSION_STATUSES = "('to_deposit', 'in_review', 'validated', 'in_stock', 'locked')"


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        f"""
        ALTER TABLE reservation
            ADD COLUMN print_support_mode varchar(20),
            ADD CONSTRAINT reservation_impression_status
                CHECK (impression_status IS NULL OR impression_status IN {IMPRESSION_STATUSES}),
            ADD CONSTRAINT reservation_print_support_mode
                CHECK (print_support_mode IS NULL OR print_support_mode IN ('print', 'hybrid', 'reuse_all'))
        """
    )
    # Where the order is shipped, frozen when the order is made (a store that moves later does
    # not redirect panels already on their way). Target `none`: nothing is shipped.
    migrator.sql(
        """
        ALTER TABLE print_order
            ADD COLUMN delivery_target varchar(20) NOT NULL DEFAULT 'store',
            ADD COLUMN recipient_name varchar(200),
            ADD COLUMN recipient_street varchar(200),
            ADD COLUMN recipient_postal_code varchar(20),
            ADD COLUMN recipient_city varchar(120),
            ADD COLUMN recipient_country varchar(2),
            ADD CONSTRAINT print_order_delivery_target
                CHECK (delivery_target IN ('store', 'single_address', 'none')),
            ADD CONSTRAINT print_order_recipient CHECK (
                delivery_target = 'none'
                OR (recipient_name IS NOT NULL AND recipient_street IS NOT NULL
                    AND recipient_postal_code IS NOT NULL AND recipient_city IS NOT NULL
                    AND recipient_country IS NOT NULL))
        """
    )
    migrator.sql("CREATE INDEX print_order_printer_updated ON print_order (printer_organization_id, updated_at DESC)")
    migrator.sql("CREATE INDEX print_order_reservation ON print_order (reservation_id, created_at DESC)")
    # A file attached to a deposit slot (zone, face; a null face is the whole zone) of a
    # reservation or of a batch (the batch table and its foreign key come with migration 060).
    migrator.sql(
        """
        CREATE TABLE print_preflight (
            id                  varchar(36) PRIMARY KEY,
            reservation_id      varchar(36) REFERENCES reservation (id) ON DELETE CASCADE,
            batch_id            varchar(36),
            zone_id             varchar(36) NOT NULL REFERENCES furniture_zone (id) ON DELETE RESTRICT,
            face_index          integer CHECK (face_index >= 0),
            asset_id            varchar(36) NOT NULL REFERENCES print_asset (id) ON DELETE RESTRICT,
            created_by_user_id  varchar(36) REFERENCES app_user (id) ON DELETE SET NULL,
            created_at          timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT print_preflight_owner CHECK ((reservation_id IS NULL) <> (batch_id IS NULL)),
            CONSTRAINT print_preflight_slot_key
                UNIQUE NULLS NOT DISTINCT (reservation_id, batch_id, zone_id, face_index)
        )
        """
    )
    migrator.sql("CREATE INDEX print_preflight_asset ON print_preflight (asset_id)")
    migrator.sql("CREATE INDEX print_preflight_batch ON print_preflight (batch_id) WHERE batch_id IS NOT NULL")
    # Faces whose support is already in stock, one row per face whatever path declared them
    # (a per-face switch, a whole zone, the print-support declaration, a batch's stock).
    migrator.sql(
        """
        CREATE TABLE print_reused_face (
            id              bigserial PRIMARY KEY,
            reservation_id  varchar(36) NOT NULL REFERENCES reservation (id) ON DELETE CASCADE,
            zone_id         varchar(36) NOT NULL REFERENCES furniture_zone (id) ON DELETE RESTRICT,
            face_index      integer NOT NULL CHECK (face_index >= 0),
            batch_id        varchar(36),
            created_at      timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT print_reused_face_key UNIQUE (reservation_id, zone_id, face_index)
        )
        """
    )
    migrator.sql("CREATE INDEX print_reused_face_batch ON print_reused_face (batch_id) WHERE batch_id IS NOT NULL")


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE print_reused_face, print_preflight")
    migrator.sql("DROP INDEX print_order_printer_updated, print_order_reservation")
    migrator.sql(
        "ALTER TABLE print_order DROP CONSTRAINT print_order_recipient, DROP CONSTRAINT print_order_delivery_target,"
        " DROP COLUMN delivery_target, DROP COLUMN recipient_name, DROP COLUMN recipient_street,"
        " DROP COLUMN recipient_postal_code, DROP COLUMN recipient_city, DROP COLUMN recipient_country"
    )
    migrator.sql(
        "ALTER TABLE reservation DROP CONSTRAINT reservation_impression_status,"
        " DROP CONSTRAINT reservation_print_support_mode, DROP COLUMN print_support_mode"
    )
