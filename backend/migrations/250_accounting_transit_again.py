"""A payment order may be handed to the bank, taken back and handed again: a debit whose file was
voided leaves `511` for `411` (`out_of_transit`) and the next file puts it in transit anew
(docs/accounting.md, "The books follow the bank"). `accounting_entry_once` keeps every other event
to one entry per invoice and payment order; these two are counted by the application instead (an
order is in transit while it has more `in_transit` entries than `out_of_transit` ones), each
posted by the one settlement move that takes the order into or out of a file.
"""

_ONCE = ("CREATE UNIQUE INDEX accounting_entry_once ON accounting_entry"
         " (event, coalesce(invoice_id, ''), coalesce(payment_order_id, ''))"
         " WHERE (invoice_id IS NOT NULL OR payment_order_id IS NOT NULL)")


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP INDEX accounting_entry_once")
    migrator.sql(_ONCE + " AND event NOT IN ('in_transit', 'out_of_transit')")


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP INDEX accounting_entry_once")
    migrator.sql(_ONCE)
