"""Billing (Specification C): collection, ledger, invoices and their numbering, refunds, credit notes."""
