"""Shapes of the bank's routes (API.md "The bank")."""
