"""The bank (issue 30, API.md "The bank"): the files the platform sends it (direct debits,
credit transfers), and each payment order's `settlement`, the bank's view of it (docs/bank.md)."""
