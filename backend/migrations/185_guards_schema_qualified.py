"""The guards read the tables of the schema, never a temporary table of the same name.

A table name a function reads without a schema is looked up along the caller's `search_path`,
where `pg_temp` comes first: a session allowed to create a temporary `accounting_period_close`
or `billing_financial_transition` would hand the guard its own rows. Every function of the schema
is rewritten here with the tables it reads, writes or locks named `public.<table>`; its fixed
`search_path` (and the refusal of `TEMPORARY`) is set after every migration run by
`backend.database_roles.harden`, so a function a later migration creates is covered too.
"""

import re


def _qualified(definition: str, tables: list[str]) -> str:
    names = "|".join(re.escape(name) for name in sorted(tables, key=len, reverse=True))
    pattern = re.compile(rf"\b(FROM|JOIN|INTO|UPDATE|TABLE)(\s+)(?!public\.)({names})\b", re.IGNORECASE)
    return pattern.sub(lambda m: f"{m.group(1)}{m.group(2)}public.{m.group(3)}", definition)


def migrate(migrator, database, fake=False, **kwargs):
    tables = [name for (name,) in database.execute_sql(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()]
    functions = database.execute_sql(
        "SELECT pg_get_functiondef(p.oid) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
        " WHERE n.nspname = 'public' AND p.prokind = 'f' AND p.prolang IN"
        " (SELECT oid FROM pg_language WHERE lanname IN ('plpgsql', 'sql'))").fetchall()
    for (definition,) in functions:
        rewritten = _qualified(definition, tables)
        if rewritten != definition:
            migrator.sql(rewritten.replace("%", "%%"))


def rollback(migrator, database, fake=False, **kwargs):
    """The qualified names read the same tables: nothing to undo."""
