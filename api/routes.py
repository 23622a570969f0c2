"""The route table: every route with its resource and declared access rule.

Each area module contributes `routes(deps)`; `create_app` registers them all and the policy
middleware reads the access rule of the matched route. A route without a rule cannot be
declared (the dataclass requires one), and tests walk this table.
"""

from __future__ import annotations

from dataclasses import dataclass

from api.access import PUBLIC, Access


@dataclass(frozen=True)
class Route:
    path: str
    resource: object
    access: Access | dict[str, Access]
    suffix: str | None = None

    def access_for(self, method: str) -> Access:
        if isinstance(self.access, Access):
            return self.access
        return self.access[method.upper()]


def operations_routes(deps) -> list[Route]:
    from api.health import Health
    from api.openapi import DocsPage, OpenApiDocument

    docs = DocsPage()
    return [
        Route("/api/health", Health(deps.config, deps.telemetry), PUBLIC),
        Route("/api/openapi.json", OpenApiDocument(lambda: deps.routes), PUBLIC),
        Route("/api/docs", docs, PUBLIC),
        Route("/api/docs/init.js", docs, PUBLIC, suffix="script"),
    ]


def identity_routes(deps) -> list[Route]:
    from api.identity import admin, auth, organizations

    return [*auth.routes(deps), *organizations.routes(deps), *admin.routes(deps)]


def onboarding_routes(deps) -> list[Route]:
    from api.onboarding import envelopes, webhook

    return [*webhook.routes(deps), *envelopes.routes(deps)]


def marketplace_routes(deps) -> list[Route]:
    from api.marketplace import catalog, reservations, store_zones

    return [*store_zones.routes(deps), *catalog.routes(deps), *reservations.routes(deps)]


def printing_routes(deps) -> list[Route]:
    from api.printing import admin, assets, batches, deposits, printer_batches, printer_orders

    return [*assets.routes(deps), *deposits.routes(deps), *batches.routes(deps),
            *printer_orders.routes(deps), *printer_batches.routes(deps), *admin.routes(deps)]


def einvoicing_routes(deps) -> list[Route]:
    from api.einvoicing import admin, webhook

    return [*webhook.routes(deps), *admin.routes(deps)]


def all_routes(deps) -> list[Route]:
    from api.documents import templates

    return [*operations_routes(deps), *onboarding_routes(deps),
            *identity_routes(deps), *templates.routes(deps), *printing_routes(deps),
            *marketplace_routes(deps), *einvoicing_routes(deps)]
