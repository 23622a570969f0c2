"""Printing: the visual library (print assets) of industrial organizations."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE print_asset (
            id                   varchar(36) PRIMARY KEY,
            organization_id      varchar(60) NOT NULL REFERENCES organization (id) ON DELETE RESTRICT,
            uploaded_by_user_id  varchar(36) REFERENCES app_user (id) ON DELETE SET NULL,
            original_name        varchar(255) NOT NULL,
            technical_name       varchar(120) NOT NULL CHECK (technical_name ~ '^[a-z0-9_-]+\\.[a-z]+$'),
            content_type         varchar(40) NOT NULL
                                 CHECK (content_type IN ('application/pdf', 'image/png', 'image/jpeg', 'image/tiff')),
            size_bytes           bigint NOT NULL CHECK (size_bytes > 0),
            sha256               char(64) NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
            storage_key          varchar(200) NOT NULL CONSTRAINT print_asset_storage_key_key UNIQUE,
            created_at           timestamptz NOT NULL DEFAULT now(),
            deleted_at           timestamptz
        )
        """
    )
    # The library page: an organization's live assets, newest first.
    migrator.sql(
        "CREATE INDEX print_asset_library ON print_asset (organization_id, created_at DESC, id)"
        " WHERE deleted_at IS NULL"
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE print_asset")
