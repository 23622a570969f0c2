"""A complete production configuration, for the tests of what production refuses: each test
removes or changes one setting and expects exactly its refusal."""

PRODUCTION = {
    "ENVIRONMENT": "production",
    "DATABASE_URL": "postgresql://app:pw@db:5432/vitrine",
    "DATABASE_OWNER_URL": "postgresql://owner:pw@db:5432/vitrine",
    "REDIS_URL": "redis://cache:6379/0",
    "PUBLIC_BASE_URL": "https://app.vitrine.example",
    "TRUSTED_PROXY_COUNT": "1",
    "STORAGE_BACKEND": "gcs",
    "GCS_BUCKET": "vitrine-files",
    "SMTP_URL": "smtps://mailer:pw@smtp.vitrine.example:465",
    "ESIGN_API_KEY": "esign-key",
    "ESIGN_WEBHOOK_SECRET": "esign-webhook-secret",
    "ODP_CLIENT_ID": "odp-client",
    "ODP_CLIENT_SECRET": "odp-secret",
    "ODP_ENTITY_ID": "odp-entity",
    "PLATFORM_COMMISSION_RATE_BPS": "2000",
    "PLATFORM_LEGAL_COMPANY_NAME": "Vitrine SAS",
    "PLATFORM_LEGAL_FORM": "SAS",
    "PLATFORM_SHARE_CAPITAL_CENTS": "5000000",
    "PLATFORM_REGISTRATION": "RCS Paris 732 829 320",
    "PLATFORM_LEGAL_SIRET": "73282932000074",
    "PLATFORM_LEGAL_STREET": "1 rue de la Paix",
    "PLATFORM_LEGAL_POSTAL_CODE": "75002",
    "PLATFORM_LEGAL_CITY": "Paris",
    "PLATFORM_LEGAL_EMAIL": "compta@vitrine.example",
    "PLATFORM_LEGAL_IBAN": "FR7630006000011234567890189",
}

_SERVERS = ("DATABASE_URL", "DATABASE_OWNER_URL", "REDIS_URL")


def production_over(environ) -> dict[str, str]:
    """`environ` (a test session's environment) made a complete production one: its own servers
    kept, local storage on a declared persistent volume (nothing to reach), the rest of PRODUCTION."""
    settings = {name: value for name, value in PRODUCTION.items() if name not in _SERVERS}
    return {**environ, **settings, "STORAGE_BACKEND": "local", "STORAGE_PERSISTENT_VOLUME": "true"}
