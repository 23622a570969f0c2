"""Onboarding e-signature: verification-policy overrides per organization and document type (the
manual admin override of Specification A, traced in the security audit)."""

DOCUMENT_TYPES = "'framework_contract','cgu_acceptance','sepa_mandate','delegation_proof'"
POLICIES = "'none','required','qualified'"


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        f"""
        CREATE TABLE esign_verification_override (
            id                      bigserial PRIMARY KEY,
            organization_id         varchar(60) NOT NULL REFERENCES organization (id) ON DELETE CASCADE,
            document_type           varchar(40) NOT NULL CHECK (document_type IN ({DOCUMENT_TYPES})),
            policy                  varchar(40) NOT NULL CHECK (policy IN ({POLICIES})),
            note                    text NOT NULL,
            set_by_user_id          varchar(36),
            set_at                  timestamptz NOT NULL DEFAULT now(),
            UNIQUE (organization_id, document_type)
        )
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE esign_verification_override")
