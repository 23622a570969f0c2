"""Printing (spec B): the visual library, deposits, batches, the printer workspace and admin."""

from __future__ import annotations

from api.access import Route
from api.printing import admin, assets, batches, deposits, faces, printer_batches, printer_orders


def routes(deps) -> list[Route]:
    return [*assets.routes(deps), *deposits.routes(deps), *batches.routes(deps),
            *printer_orders.routes(deps), *printer_batches.routes(deps), *admin.routes(deps),
            *faces.routes(deps)]
