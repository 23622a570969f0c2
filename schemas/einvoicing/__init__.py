"""E-invoicing schemas (Specification C)."""
