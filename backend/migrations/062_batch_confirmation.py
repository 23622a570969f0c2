"""Printing: the summary a batch confirmation answered, kept so a replayed confirmation (a double
click, a retry) answers exactly the same."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE print_order_batch ADD COLUMN confirmation jsonb")


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE print_order_batch DROP COLUMN confirmation")
