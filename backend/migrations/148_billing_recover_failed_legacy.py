"""Billing: a legacy reservation whose deposit collection failed can be recovered.

A failed legacy collection leaves its financial record opened `deposit_due` with nothing paid and
nothing invoiced. `vitrine billing recover-legacy` moves such a reservation to `principal_seller`
like a never-billed one, its record reset to the recovered amounts and moved
`deposit_due -> reservation_total_due` so the collection takes it: this adds that row to the
transition map (`backend.billing.records.TRANSITION_MAP`, migration 131).
"""

_ROW = ("deposit_due", "reservation_total_due", "legacy data recovery of a failed deposit collection")


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql("INSERT INTO billing_financial_transition VALUES (%s, %s, %s)", *_ROW)


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DELETE FROM billing_financial_transition WHERE from_status = %s AND to_status = %s", *_ROW[:2])
