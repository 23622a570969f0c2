"""Billing: the ledger's and payment orders' links to an invoice are checked at commit, so a
flow can write them before the invoice row itself (whose number is allocated last, keeping the
series' counter row locked for as short a time as possible)."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE billing_ledger_entry ALTER CONSTRAINT billing_ledger_entry_invoice_id_fkey"
                 " DEFERRABLE INITIALLY DEFERRED")
    migrator.sql("ALTER TABLE billing_payment_order ALTER CONSTRAINT billing_payment_order_invoice_id_fkey"
                 " DEFERRABLE INITIALLY DEFERRED")


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE billing_ledger_entry ALTER CONSTRAINT billing_ledger_entry_invoice_id_fkey"
                 " NOT DEFERRABLE")
    migrator.sql("ALTER TABLE billing_payment_order ALTER CONSTRAINT billing_payment_order_invoice_id_fkey"
                 " NOT DEFERRABLE")
