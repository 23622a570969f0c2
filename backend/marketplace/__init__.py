"""Marketplace core: store zones, furniture types, stores and ad spaces, campaigns, cart,
reservations (API.md "Marketplace core", Specification A store zones, Specification C pricing)."""
