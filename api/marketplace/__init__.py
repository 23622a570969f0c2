"""The marketplace: store zones, furniture types, stores and ad spaces, campaigns, cart and
reservations."""

from __future__ import annotations

from api.access import Route
from api.marketplace import catalog, reservations, store_zones


def routes(deps) -> list[Route]:
    return [*store_zones.routes(deps), *catalog.routes(deps), *reservations.routes(deps)]
