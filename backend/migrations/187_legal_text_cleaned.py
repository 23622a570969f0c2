"""Legal names, addresses and signers' names stored before `backend.legal_text` held: cleaned once,
and every change recorded in `legal_text_cleaning` (table, row, column, before, after), which the
operator reads (docs/operations.md).

A control character becomes a space; leading formula characters (`=`, `+`, `-`, `@`) and spaces
are dropped; a value left empty becomes `?`. Rows that already follow the rule are untouched.
"""

_COLUMNS = (
    ("organization", "id", ("legal_name",)),
    ("billing_profile", "organization_id", ("legal_name", "street", "postal_code", "city", "signer_first_name",
                                            "signer_last_name")),
    ("store", "id", ("street", "postal_code", "city")),
)


def _cleaned(column: str) -> str:
    return f"coalesce(nullif(ltrim(regexp_replace({column}, '[[:cntrl:]]', ' ', 'g'), '=+-@ '), ''), '?')"


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE legal_text_cleaning (
            id          bigserial PRIMARY KEY,
            table_name  varchar(63) NOT NULL,
            row_id      text NOT NULL,
            column_name varchar(63) NOT NULL,
            before      text NOT NULL,
            after       text NOT NULL,
            cleaned_at  timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    for table, key, columns in _COLUMNS:
        for column in columns:
            migrator.sql(
                f"""
                WITH changed AS (
                    UPDATE {table} t SET {column} = c.after
                      FROM (SELECT {key} AS row_id, {column} AS before, {_cleaned(column)} AS after FROM {table}
                             WHERE {column} <> {_cleaned(column)}) c
                     WHERE t.{key} = c.row_id
                    RETURNING c.row_id, c.before, c.after)
                INSERT INTO legal_text_cleaning (table_name, row_id, column_name, before, after)
                SELECT '{table}', row_id, '{column}', before, after FROM changed
                """  # noqa: S608 (constants only)
            )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE legal_text_cleaning")
