"""The books' routes (API.md "The books"): FEC, trial balance, ledger."""
