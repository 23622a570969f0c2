"""A magic link works only in the browser that asked for it: the token row keeps the digest of that
browser's cookie (login CSRF: a link of the attacker's account opened by a victim signs nobody in)."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE auth_token ADD COLUMN browser_hash varchar(64)")


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE auth_token DROP COLUMN browser_hash")
