"""Billing and reservations: amounts in 64-bit columns.

A price at the top of what an ad space allows (1,000,000,000 cents) with its commission and VAT
overflows a 32-bit column (2,147,483,647): every amount column of billing and of the reservation's
frozen pricing becomes `bigint` (API.md "Money that always balances").
"""

_COLUMNS = {
    "billing_financial_record": ("store_base_cents", "commission_cents", "total_cents", "refunded_excl_tax_cents"),
    "billing_invoice": ("amount_excl_tax_cents", "tax_amount_cents"),
    "billing_payment_order": ("amount_cents",),
    "reservation": ("base_amount_cents", "commission_amount_cents", "total_amount_cents", "counter_price_cents"),
}


def migrate(migrator, database, fake=False, **kwargs):
    for table, columns in _COLUMNS.items():
        changes = ", ".join(f"ALTER COLUMN {column} TYPE bigint" for column in columns)
        migrator.sql(f"ALTER TABLE {table} {changes}")


def rollback(migrator, database, fake=False, **kwargs):
    for table, columns in _COLUMNS.items():
        changes = ", ".join(f"ALTER COLUMN {column} TYPE integer" for column in columns)
        migrator.sql(f"ALTER TABLE {table} {changes}")
