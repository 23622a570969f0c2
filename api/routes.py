"""The route table: every area's routes, each with its resource and declared access rule.

The platform's own routes (`api.health`, `api.openapi`) come first, then every area package of
`api` (`api/<area>/__init__.py` exposing `routes(deps)`), found by walking the package: a new area
joins the table by existing. `create_app` registers the table and the policy middleware reads the
access rule of the matched route. A route without a rule cannot be declared (`api.access.Route`
requires one), and tests walk this table.
"""

from __future__ import annotations

import importlib
import pkgutil

import api
from api import health, metrics, openapi
from api.access import Route


def area_packages() -> list:
    """Every area package of `api`, in name order."""
    return [importlib.import_module(f"api.{module.name}")
            for module in sorted(pkgutil.iter_modules(api.__path__), key=lambda m: m.name) if module.ispkg]


def all_routes(deps) -> list[Route]:
    table = [*health.routes(deps), *metrics.routes(deps), *openapi.routes(deps)]
    for area in area_packages():
        table.extend(area.routes(deps))
    return table
