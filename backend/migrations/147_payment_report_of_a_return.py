"""E-invoicing: the negative 212 of a returned direct debit (docs/bank.md).

A payment order has its 212 (`<invoiceNumber>:212:<paymentOrderId>`); a direct debit the bank
returns after it was reported gets a second, negative one, keyed
`<invoiceNumber>:212:<paymentOrderId>:returned` (`backend.einvoicing.payment_reports`). The key's
shape admits both, nothing else.
"""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE einvoice_payment_report DROP CONSTRAINT einvoice_payment_report_key_shape")
    migrator.sql(
        "ALTER TABLE einvoice_payment_report ADD CONSTRAINT einvoice_payment_report_key_shape"
        " CHECK (idempotency_key IN (invoice_number || ':212:' || payment_order_id,"
        " invoice_number || ':212:' || payment_order_id || ':returned'))"
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE einvoice_payment_report DROP CONSTRAINT einvoice_payment_report_key_shape")
    migrator.sql(
        "ALTER TABLE einvoice_payment_report ADD CONSTRAINT einvoice_payment_report_key_shape"
        " CHECK (idempotency_key = invoice_number || ':212:' || payment_order_id)"
    )
