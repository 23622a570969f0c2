"""Printing: the printer's order list reads its page from one index, and a visual keeps the CRC-32
of its bytes.

- `print_order_printer_list` serves the list's order (most recently updated first, id as the
  tiebreaker) with the filters it takes (status, batch or not) in the index itself, drafts left
  out: a page at any offset and the total are read from the index, the joins only for the page's
  rows. It replaces `print_order_printer_updated`, its prefix.
- `print_asset.crc32`: the CRC-32 a ZIP entry header carries, computed while the upload streams
  through, so a download writes known headers and streams the bytes once. Null for visuals uploaded
  before this migration: the first download computes it and stores it.
"""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        "CREATE INDEX print_order_printer_list ON print_order (printer_organization_id, updated_at DESC, id DESC)"
        " INCLUDE (status, batch_id) WHERE status <> 'draft'"
    )
    migrator.sql("DROP INDEX print_order_printer_updated")
    migrator.sql(
        "ALTER TABLE print_asset ADD COLUMN crc32 bigint"
        " CONSTRAINT print_asset_crc32_range CHECK (crc32 BETWEEN 0 AND 4294967295)"
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE print_asset DROP COLUMN crc32")
    migrator.sql("CREATE INDEX print_order_printer_updated ON print_order (printer_organization_id, updated_at DESC)")
    migrator.sql("DROP INDEX print_order_printer_list")
