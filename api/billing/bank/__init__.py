"""The bank's routes (API.md "The bank"; docs/bank.md)."""
