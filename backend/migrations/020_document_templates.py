"""Document templates: versions (drafts and published) and the per-template version counter."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE document_template_version (
            id                  varchar(36) PRIMARY KEY,
            template_key        varchar(64) NOT NULL CHECK (template_key ~ '^[a-z0-9_]+$'),
            kind                varchar(16) NOT NULL CHECK (kind IN ('markdown', 'pdf_css')),
            status              varchar(16) NOT NULL CHECK (status IN ('draft', 'published', 'archived')),
            version             integer CHECK (version > 0),
            content_key         varchar(300) NOT NULL,
            content_sha256      char(64) NOT NULL,
            title_snapshot      varchar(200),
            catalog_version     varchar(40),
            variables_snapshot  jsonb,
            created_by_user_id  varchar(36),
            updated_by_user_id  varchar(36),
            created_at          timestamptz NOT NULL DEFAULT now(),
            updated_at          timestamptz NOT NULL DEFAULT now(),
            published_at        timestamptz,
            CONSTRAINT document_template_version_numbered
                CHECK ((status = 'draft') = (version IS NULL)),
            CONSTRAINT document_template_version_published_at
                CHECK ((status = 'draft') = (published_at IS NULL))
        )
        """
    )
    # Business rule 1: one draft per (templateKey, kind); the draft upsert targets this index.
    migrator.sql(
        "CREATE UNIQUE INDEX document_template_one_draft ON document_template_version (template_key, kind)"
        " WHERE status = 'draft'"
    )
    # Two publishes of one template never share a number, whatever the race.
    migrator.sql(
        "CREATE UNIQUE INDEX document_template_version_number"
        " ON document_template_version (template_key, kind, version)"
    )
    # The last number handed out per template: numbers are never reused after a deletion, and
    # the row lock serializes concurrent publishes. Rows are never deleted, which also makes
    # seeding of the catalog's first versions happen once per template, ever.
    migrator.sql(
        """
        CREATE TABLE document_template_counter (
            template_key  varchar(64) NOT NULL,
            kind          varchar(16) NOT NULL,
            last_version  integer NOT NULL CHECK (last_version > 0),
            PRIMARY KEY (template_key, kind)
        )
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE document_template_counter")
    migrator.sql("DROP TABLE document_template_version")
