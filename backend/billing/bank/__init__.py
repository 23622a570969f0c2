"""The bank (issue 30): statements in, matching, returned debits, overdue transfers (docs/bank.md)."""
