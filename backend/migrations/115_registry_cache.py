"""The company registry cache: each SIREN's last answer from the registry (the extract, or
`unknown` when the registry said it does not know the SIREN) with the time it was fetched
(`REGISTRY_CACHE_DAYS`, docs/onboarding.md)."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE registry_company (
            siren               char(9) PRIMARY KEY CHECK (siren ~ '^[0-9]{9}$'),
            state               varchar(20) NOT NULL CHECK (state IN ('active', 'ceased', 'unknown')),
            legal_name          text,
            naf_code            varchar(10),
            street              text,
            postal_code         varchar(20),
            city                text,
            representatives     jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(representatives) = 'array'),
            registry_updated_on date,
            fetched_at          timestamptz NOT NULL DEFAULT now(),
            CHECK (state = 'unknown' OR legal_name IS NOT NULL)
        )
        """
    )
    migrator.sql("CREATE INDEX registry_company_fetched_at ON registry_company (fetched_at)")


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE registry_company")
