"""Onboarding e-signature: envelopes, their documents, provider webhook events, KYB delegation documents."""

STATUSES = (
    "'pending_creation','draft','pending_signature','signer_notified','signer_opened',"
    "'signed','declined','expired','canceled','invalidated','error'"
)
PENDING = "'pending_creation','draft','pending_signature','signer_notified','signer_opened'"
DOCUMENT_TYPES = "'framework_contract','cgu_acceptance','sepa_mandate','delegation_proof'"
POLICIES = "'none','required','qualified'"
LEVELS = "'electronic_signature','advanced_electronic_signature','qualified_electronic_signature'"
MODES = "'no_otp','otp_email','otp_sms'"


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        f"""
        CREATE TABLE onboarding_signature_request (
            id                              varchar(36) PRIMARY KEY,
            organization_id                 varchar(60) NOT NULL REFERENCES organization (id) ON DELETE CASCADE,
            status                          varchar(40) NOT NULL DEFAULT 'pending_creation'
                                            CHECK (status IN ({STATUSES})),
            provider_signature_request_id   varchar(120) UNIQUE,
            provider_signer_id              varchar(120),
            signature_link                  text,
            delivery_mode                   varchar(40) NOT NULL DEFAULT 'email'
                                            CHECK (delivery_mode IN ('email','none')),
            identity_verification_policy    varchar(40) NOT NULL CHECK (identity_verification_policy IN ({POLICIES})),
            signature_level                 varchar(40) NOT NULL CHECK (signature_level IN ({LEVELS})),
            authentication_mode             varchar(40) CHECK (authentication_mode IN ({MODES})),
            signer_on_registry_extract      boolean NOT NULL,
            delegator                       jsonb,
            audit_trail_storage_key         text,
            error_reason                    text,
            last_event_at                   timestamptz,
            created_by_user_id              varchar(36),
            created_at                      timestamptz NOT NULL DEFAULT now(),
            updated_at                      timestamptz NOT NULL DEFAULT now(),
            status_changed_at               timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    # At most one pending envelope per organization: a second start is refused by this index.
    migrator.sql(
        f"""
        CREATE UNIQUE INDEX onboarding_signature_request_one_pending
            ON onboarding_signature_request (organization_id) WHERE status IN ({PENDING})
        """
    )
    migrator.sql(
        "CREATE INDEX onboarding_signature_request_organization "
        "ON onboarding_signature_request (organization_id, created_at DESC)"
    )
    migrator.sql(
        "CREATE INDEX onboarding_signature_request_status "
        "ON onboarding_signature_request (status, status_changed_at)"
    )
    migrator.sql(
        f"""
        CREATE TABLE onboarding_signature_document (
            id                              bigserial PRIMARY KEY,
            signature_request_id            varchar(36) NOT NULL
                                            REFERENCES onboarding_signature_request (id) ON DELETE CASCADE,
            document_type                   varchar(40) NOT NULL CHECK (document_type IN ({DOCUMENT_TYPES})),
            identity_verification_policy    varchar(40) NOT NULL CHECK (identity_verification_policy IN ({POLICIES})),
            signature_level                 varchar(40) NOT NULL CHECK (signature_level IN ({LEVELS})),
            authentication_mode             varchar(40) CHECK (authentication_mode IN ({MODES})),
            provider_document_id            varchar(120),
            signed_storage_key              text,
            UNIQUE (signature_request_id, document_type)
        )
        """
    )
    migrator.sql(
        """
        CREATE TABLE esign_webhook_event (
            id                              bigserial PRIMARY KEY,
            event_id                        varchar(200) NOT NULL UNIQUE,
            event_name                      varchar(80) NOT NULL,
            provider_signature_request_id   varchar(120),
            payload                         jsonb NOT NULL,
            retry_attempt                   integer,
            processing_status               varchar(40) NOT NULL DEFAULT 'received'
                                            CHECK (processing_status IN
                                                   ('received','processed','unknown_request','ignored')),
            processing_note                 text,
            received_at                     timestamptz NOT NULL DEFAULT now(),
            processed_at                    timestamptz
        )
        """
    )
    migrator.sql(
        "CREATE INDEX esign_webhook_event_provider_request "
        "ON esign_webhook_event (provider_signature_request_id, received_at)"
    )
    migrator.sql(
        """
        CREATE TABLE kyb_document (
            id                      bigserial PRIMARY KEY,
            organization_id         varchar(60) NOT NULL REFERENCES organization (id) ON DELETE CASCADE,
            document_type           varchar(40) NOT NULL CHECK (document_type IN
                                    ('delegation_letter','delegator_id_document','delegate_id_document')),
            storage_key             text NOT NULL,
            content_type            varchar(80) NOT NULL,
            size_bytes              integer NOT NULL CHECK (size_bytes > 0),
            uploaded_by_user_id     varchar(36),
            uploaded_at             timestamptz NOT NULL DEFAULT now(),
            UNIQUE (organization_id, document_type)
        )
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE kyb_document")
    migrator.sql("DROP TABLE esign_webhook_event")
    migrator.sql("DROP TABLE onboarding_signature_document")
    migrator.sql("DROP TABLE onboarding_signature_request")
