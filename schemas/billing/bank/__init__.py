"""Shapes of the bank routes (API.md "The bank")."""
