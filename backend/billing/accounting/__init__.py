"""Accounting (spec C): the double-entry ledger, one balanced journal transaction per money event."""
