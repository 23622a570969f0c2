"""Self-billing routes (spec C): catch-up, the distributor's mandate, reservation incidents."""
