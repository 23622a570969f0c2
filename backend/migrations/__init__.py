"""Versioned migrations (peewee-migrate files `NNN_name.py`), applied by `vitrine migrate`.

Migrations are written in SQL through `migrator.sql` so that CHECK constraints, partial unique
indexes and exclusion constraints are stated exactly. Number ranges by area: 001-009 foundation,
010-019 identity, 020-029 templates, 030-039 marketplace, 040-049 onboarding, 050-059 printing,
060-069 batches, 070-089 billing and e-invoicing.
"""
