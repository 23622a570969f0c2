"""Marketplace: store zones (universes, rayons) and versioned furniture types."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE universe (
            id               varchar(36) PRIMARY KEY,
            code             varchar(60) NOT NULL CONSTRAINT universe_code_key UNIQUE,
            label            varchar(120) NOT NULL CHECK (btrim(label) <> ''),
            normalized_label varchar(120) NOT NULL
                             CONSTRAINT universe_normalized_label_key UNIQUE,
            sort_order       integer NOT NULL,
            is_transversal   boolean NOT NULL DEFAULT false,
            archived_at      timestamptz,
            created_at       timestamptz NOT NULL DEFAULT now(),
            updated_at       timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    migrator.sql(
        """
        CREATE TABLE rayon (
            id               varchar(36) PRIMARY KEY,
            universe_id      varchar(36) NOT NULL REFERENCES universe (id) ON DELETE RESTRICT,
            code             varchar(60) NOT NULL CONSTRAINT rayon_code_key UNIQUE,
            label            varchar(120) NOT NULL CHECK (btrim(label) <> ''),
            normalized_label varchar(120) NOT NULL,
            sort_order       integer NOT NULL,
            archived_at      timestamptz,
            created_at       timestamptz NOT NULL DEFAULT now(),
            updated_at       timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT rayon_universe_label_key UNIQUE (universe_id, normalized_label)
        )
        """
    )
    migrator.sql(
        """
        CREATE TABLE furniture_type (
            id              varchar(36) PRIMARY KEY,
            current_version integer NOT NULL DEFAULT 1 CHECK (current_version >= 1),
            created_at      timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    migrator.sql(
        """
        CREATE TABLE furniture_type_version (
            id                      varchar(36) PRIMARY KEY,
            furniture_type_id       varchar(36) NOT NULL REFERENCES furniture_type (id) ON DELETE CASCADE,
            version                 integer NOT NULL CHECK (version >= 1),
            name                    varchar(120) NOT NULL CHECK (btrim(name) <> ''),
            printer_organization_id varchar(64),
            created_by_user_id      varchar(64),
            created_at              timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT furniture_type_version_key UNIQUE (furniture_type_id, version)
        )
        """
    )
    migrator.sql(
        """
        CREATE TABLE furniture_zone (
            id                        varchar(36) PRIMARY KEY,
            furniture_type_version_id varchar(36) NOT NULL
                                      REFERENCES furniture_type_version (id) ON DELETE CASCADE,
            position                  integer NOT NULL,
            code                      varchar(60) NOT NULL,
            label                     varchar(120) NOT NULL,
            face_quantity             integer NOT NULL CHECK (face_quantity >= 1),
            printable                 boolean NOT NULL,
            width_mm                  integer NOT NULL CHECK (width_mm > 0),
            height_mm                 integer NOT NULL CHECK (height_mm > 0),
            CONSTRAINT furniture_zone_code_key UNIQUE (furniture_type_version_id, code)
        )
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE furniture_zone, furniture_type_version, furniture_type, rayon, universe")
