"""Store zones: normalized labels spell the ligatures œ and æ as oe and ae (as codes always did), so
"Œufs" and "Oeufs" are one label. Rows written before hold the ligature; rewrite them."""

_FOLD = "replace(replace(normalized_label, 'œ', 'oe'), 'æ', 'ae')"


def migrate(migrator, database, fake=False, **kwargs):
    for table in ("universe", "rayon"):
        migrator.sql(f"UPDATE {table} SET normalized_label = {_FOLD} WHERE normalized_label ~ '[œæ]'")  # noqa: S608


def rollback(migrator, database, fake=False, **kwargs):
    """Nothing to undo: the folded labels are valid under the previous rule too."""
