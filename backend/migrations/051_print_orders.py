"""Printing: print orders, their manufacturing lines and the record of every status change."""


def migrate(migrator, database, fake=False, **kwargs):
    # Codes PM-0001... come from a sequence: gaps are acceptable, duplicates never happen.
    migrator.sql("CREATE SEQUENCE print_order_code_seq")
    migrator.sql(
        """
        CREATE TABLE print_order (
            id                          varchar(36) PRIMARY KEY,
            code                        varchar(20) NOT NULL CONSTRAINT print_order_code_key UNIQUE
                                        CHECK (code ~ '^PM-[0-9]{4,}$'),
            reservation_id              varchar(36) NOT NULL REFERENCES reservation (id) ON DELETE RESTRICT,
            printer_organization_id     varchar(60) NOT NULL REFERENCES organization (id) ON DELETE RESTRICT,
            industrial_organization_id  varchar(60) NOT NULL REFERENCES organization (id) ON DELETE RESTRICT,
            batch_id                    varchar(36),
            status                      varchar(40) NOT NULL DEFAULT 'draft',
            carrier                     varchar(120),
            tracking_number             varchar(120),
            tracking_url                varchar(2000),
            cancel_reason               text,
            created_at                  timestamptz NOT NULL DEFAULT now(),
            updated_at                  timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT print_order_status CHECK (status IN
                ('draft', 'pending', 'sent', 'in_production', 'produced', 'delivered', 'cancelled')),
            CONSTRAINT print_order_cancel_reason CHECK (cancel_reason IS NULL OR status = 'cancelled')
        )
        """
    )
    # Spec B: one reservation = one order; a cancelled order leaves room for a new one.
    migrator.sql(
        "CREATE UNIQUE INDEX print_order_active_reservation ON print_order (reservation_id)"
        " WHERE status <> 'cancelled'"
    )
    migrator.sql("CREATE INDEX print_order_printer ON print_order (printer_organization_id, status, created_at)")
    migrator.sql("CREATE INDEX print_order_industrial ON print_order (industrial_organization_id, created_at)")
    migrator.sql("CREATE INDEX print_order_batch ON print_order (batch_id) WHERE batch_id IS NOT NULL")
    migrator.sql(
        """
        CREATE TABLE print_order_line (
            id          bigserial PRIMARY KEY,
            order_id    varchar(36) NOT NULL REFERENCES print_order (id) ON DELETE CASCADE,
            position    integer NOT NULL CHECK (position >= 0),
            zone_id     varchar(36) NOT NULL REFERENCES furniture_zone (id) ON DELETE RESTRICT,
            face_index  integer CHECK (face_index >= 0),
            quantity    integer NOT NULL CHECK (quantity > 0),
            asset_id    varchar(36) REFERENCES print_asset (id) ON DELETE RESTRICT,
            qualifiers  text[] NOT NULL DEFAULT '{}',
            CONSTRAINT print_order_line_position_key UNIQUE (order_id, position),
            -- A deposit slot (zone, face; a null face is the whole zone) holds one file.
            CONSTRAINT print_order_line_slot_key UNIQUE NULLS NOT DISTINCT (order_id, zone_id, face_index),
            CONSTRAINT print_order_line_face_quantity CHECK (face_index IS NULL OR quantity = 1)
        )
        """
    )
    migrator.sql("CREATE INDEX print_order_line_asset ON print_order_line (asset_id) WHERE asset_id IS NOT NULL")
    migrator.sql(
        """
        CREATE TABLE print_order_status_change (
            id             bigserial PRIMARY KEY,
            order_id       varchar(36) NOT NULL REFERENCES print_order (id) ON DELETE CASCADE,
            from_status    varchar(40) NOT NULL,
            to_status      varchar(40) NOT NULL,
            actor_user_id  varchar(36) REFERENCES app_user (id) ON DELETE SET NULL,
            changed_at     timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT print_order_status_change_statuses CHECK (
                from_status IN ('draft', 'pending', 'sent', 'in_production', 'produced', 'delivered', 'cancelled')
                AND to_status IN ('draft', 'pending', 'sent', 'in_production', 'produced', 'delivered', 'cancelled')
                AND from_status <> to_status)
        )
        """
    )
    migrator.sql("CREATE INDEX print_order_status_change_order ON print_order_status_change (order_id, changed_at)")


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE print_order_status_change, print_order_line, print_order")
    migrator.sql("DROP SEQUENCE print_order_code_seq")
