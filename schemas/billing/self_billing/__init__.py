"""Shapes of the self-billing sub-area (spec C): catch-up, mandate, incidents."""
