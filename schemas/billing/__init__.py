"""Billing schemas (Specification C)."""
