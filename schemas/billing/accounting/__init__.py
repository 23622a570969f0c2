"""Shapes of the books' routes (API.md "The books")."""
