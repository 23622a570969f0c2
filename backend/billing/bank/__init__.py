"""The bank (API.md "The bank"): the files the platform sends it (direct debits,
credit transfers), each payment order's `settlement`, the bank's view of it, and what comes back:
statements in, their matching, returned debits, overdue transfers (docs/bank.md)."""
