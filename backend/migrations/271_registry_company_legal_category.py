"""The legal category the company directory answers for a SIREN (`nature_juridique`, INSEE's
catégorie juridique code), kept with its cached extract: a billing profile's legal form is
pre-filled from it (docs/onboarding.md, "What the registry pre-fills").
"""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE registry_company ADD COLUMN legal_category varchar(4)")


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE registry_company DROP COLUMN legal_category")
