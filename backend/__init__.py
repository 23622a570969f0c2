"""The Vitrine domain: configuration, database, models and services by area."""
