"""Identity: users, sessions, single-use tokens, organizations, memberships, billing profiles,
invitations."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE app_user (
            id                 varchar(36) PRIMARY KEY,
            email              varchar(320) NOT NULL CHECK (email = lower(email)),
            name               varchar(200) NOT NULL,
            password_hash      text,
            email_verified_at  timestamptz,
            roles              text[] NOT NULL DEFAULT '{}'
                               CHECK (roles <@ ARRAY['admin','industrial','distributor','printer']),
            permissions        text[] NOT NULL DEFAULT '{}',
            blocked_at         timestamptz,
            created_at         timestamptz NOT NULL DEFAULT now(),
            updated_at         timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    migrator.sql("CREATE UNIQUE INDEX app_user_email ON app_user (email)")
    migrator.sql(
        """
        CREATE TABLE organization (
            id                varchar(60) PRIMARY KEY,
            actor_type        varchar(40) NOT NULL CHECK (actor_type IN ('industrial','distributor','printer')),
            siren             varchar(9) NOT NULL CHECK (siren ~ '^[0-9]{9}$'),
            legal_name        varchar(200) NOT NULL,
            kyb_status        varchar(40) CHECK (kyb_status IN ('submitted','in_review','approved','rejected')),
            kyb_note          text,
            kyb_submitted_at  timestamptz,
            kyb_reviewed_at   timestamptz,
            created_at        timestamptz NOT NULL DEFAULT now(),
            updated_at        timestamptz NOT NULL DEFAULT now(),
            CHECK (id = actor_type || ':' || siren)
        )
        """
    )
    migrator.sql("CREATE INDEX organization_created_at ON organization (created_at)")
    migrator.sql(
        """
        CREATE TABLE membership (
            id               bigserial PRIMARY KEY,
            user_id          varchar(36) NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
            organization_id  varchar(60) NOT NULL REFERENCES organization (id) ON DELETE CASCADE,
            role             varchar(40) NOT NULL CHECK (role IN ('manager','member','billing')),
            created_at       timestamptz NOT NULL DEFAULT now(),
            UNIQUE (user_id, organization_id)
        )
        """
    )
    migrator.sql("CREATE INDEX membership_organization ON membership (organization_id)")
    migrator.sql(
        """
        CREATE TABLE auth_session (
            id                      varchar(36) PRIMARY KEY,
            user_id                 varchar(36) NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
            token_hash              varchar(64) NOT NULL UNIQUE,
            active_organization_id  varchar(60) REFERENCES organization (id) ON DELETE SET NULL,
            ip                      varchar(64),
            user_agent              varchar(400),
            created_at              timestamptz NOT NULL DEFAULT now(),
            expires_at              timestamptz NOT NULL,
            revoked_at              timestamptz
        )
        """
    )
    migrator.sql("CREATE INDEX auth_session_user ON auth_session (user_id) WHERE revoked_at IS NULL")
    migrator.sql(
        """
        CREATE TABLE auth_token (
            id          bigserial PRIMARY KEY,
            user_id     varchar(36) NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
            purpose     varchar(40) NOT NULL
                        CHECK (purpose IN ('magic_link','password_reset','email_verification')),
            token_hash  varchar(64) NOT NULL UNIQUE,
            created_at  timestamptz NOT NULL DEFAULT now(),
            expires_at  timestamptz NOT NULL,
            used_at     timestamptz
        )
        """
    )
    migrator.sql(
        """
        CREATE TABLE billing_profile (
            organization_id             varchar(60) PRIMARY KEY REFERENCES organization (id) ON DELETE CASCADE,
            legal_name                  varchar(200) NOT NULL,
            siret                       varchar(14) NOT NULL CHECK (siret ~ '^[0-9]{14}$'),
            vat_number                  varchar(13),
            street                      varchar(300) NOT NULL,
            postal_code                 varchar(20) NOT NULL,
            city                        varchar(120) NOT NULL,
            country                     varchar(2) NOT NULL,
            iban                        varchar(34),
            signer_first_name           varchar(120) NOT NULL,
            signer_last_name            varchar(120) NOT NULL,
            signer_email                varchar(320) NOT NULL,
            signer_phone                varchar(20) NOT NULL,
            signer_on_registry_extract  boolean NOT NULL,
            updated_at                  timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    migrator.sql("CREATE INDEX billing_profile_siret ON billing_profile (siret)")
    migrator.sql(
        """
        CREATE TABLE invitation (
            id               varchar(36) PRIMARY KEY,
            organization_id  varchar(60) NOT NULL REFERENCES organization (id) ON DELETE CASCADE,
            email            varchar(320) NOT NULL,
            role             varchar(40) NOT NULL CHECK (role IN ('manager','member','billing')),
            token_hash       varchar(64) NOT NULL UNIQUE,
            invited_by_id    varchar(36) REFERENCES app_user (id) ON DELETE SET NULL,
            created_at       timestamptz NOT NULL DEFAULT now(),
            expires_at       timestamptz NOT NULL,
            accepted_at      timestamptz,
            accepted_by_id   varchar(36) REFERENCES app_user (id) ON DELETE SET NULL
        )
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql(
        "DROP TABLE invitation, billing_profile, auth_token, auth_session, membership, organization, app_user"
    )
