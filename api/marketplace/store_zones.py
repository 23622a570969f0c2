"""Store zones (Specification A): the admin universe and rayon tree (permission `catalog.manage.all`),
and its active part, readable by every signed-in user."""

from __future__ import annotations

from api.access import BUSINESS_SESSION, admin
from api.responses import load, send
from api.routes import Route
from backend.marketplace import store_zones
from schemas.marketplace.catalog import (
    MarketplaceDeletedOut,
    RayonIn,
    RayonOut,
    RayonPatch,
    StoreZoneTreeOut,
    UniverseIn,
    UniverseOut,
    UniversePatch,
)

CATALOG = admin("catalog.manage.all")


class StoreZoneTree:
    def on_get(self, req, resp) -> None:
        """The tree of universes and rayons, both ordered by sortOrder (archived ones included).
        ---
        summary: Store-zone tree
        tags: [store zones]
        responses:
          200:
            description: universes with their rayons
            content:
              application/json:
                schema: StoreZoneTreeOutEnvelope
        """
        send(resp, StoreZoneTreeOut().dump({"universes": store_zones.zone_tree()}))


class ActiveStoreZoneTree:
    def on_get(self, req, resp) -> None:
        """The active universes and rayons (archived ones left out), ordered by sortOrder: the ids a
        distributor places its ad spaces on and an industrial targets and searches by.
        ---
        summary: Store zones (read, any signed-in user)
        tags: [store zones]
        responses:
          200:
            description: active universes with their active rayons
            content:
              application/json:
                schema: StoreZoneTreeOutEnvelope
        """
        send(resp, StoreZoneTreeOut().dump({"universes": store_zones.zone_tree(active_only=True)}))


class Universes:
    def on_post(self, req, resp) -> None:
        """Create a universe; its code is derived from the label.
        ---
        summary: Create a universe
        tags: [store zones]
        requestBody:
          content:
            application/json:
              schema: UniverseIn
        responses:
          201:
            description: the universe (409 CONFLICT when the normalized label exists)
            content:
              application/json:
                schema: UniverseAnswerEnvelope
        """
        body = load(req, UniverseIn())
        universe = store_zones.create_universe(label=body["label"], is_transversal=body["isTransversal"])
        send(resp, {"universe": UniverseOut().dump(universe)}, status=201)


class Universe:
    def on_patch(self, req, resp, universe_id: str) -> None:
        """Rename (the code stays), flag, reorder, archive or un-archive (cascading to the rayons).
        ---
        summary: Update a universe
        tags: [store zones]
        requestBody:
          content:
            application/json:
              schema: UniversePatch
        responses:
          200:
            description: the universe
            content:
              application/json:
                schema: UniverseAnswerEnvelope
        """
        body = load(req, UniversePatch())
        universe = store_zones.update_universe(
            universe_id, label=body.get("label"), is_transversal=body.get("isTransversal"),
            sort_order=body.get("sortOrder"), archived=body.get("archived"),
        )
        send(resp, {"universe": UniverseOut().dump(universe)})

    def on_delete(self, req, resp, universe_id: str) -> None:
        """Hard delete; 409 CONFLICT with `details.referencedBy` while rayons, ad spaces or campaigns
        reference it.
        ---
        summary: Delete a universe
        tags: [store zones]
        responses:
          200:
            description: deleted
            content:
              application/json:
                schema: MarketplaceDeletedOutEnvelope
        """
        store_zones.delete_universe(universe_id)
        send(resp, MarketplaceDeletedOut().dump({"id": universe_id, "deleted": True}))


class Rayons:
    def on_post(self, req, resp) -> None:
        """Create a rayon in a universe; its code is derived from the label.
        ---
        summary: Create a rayon
        tags: [store zones]
        requestBody:
          content:
            application/json:
              schema: RayonIn
        responses:
          201:
            description: the rayon (409 CONFLICT when the label exists in the universe)
            content:
              application/json:
                schema: RayonAnswerEnvelope
        """
        body = load(req, RayonIn())
        rayon = store_zones.create_rayon(universe_id=body["universeId"], label=body["label"])
        send(resp, {"rayon": RayonOut().dump(rayon)}, status=201)


class Rayon:
    def on_patch(self, req, resp, rayon_id: str) -> None:
        """Rename (the code stays), move to another universe, reorder, archive or un-archive.
        ---
        summary: Update a rayon
        tags: [store zones]
        requestBody:
          content:
            application/json:
              schema: RayonPatch
        responses:
          200:
            description: the rayon
            content:
              application/json:
                schema: RayonAnswerEnvelope
        """
        body = load(req, RayonPatch())
        rayon = store_zones.update_rayon(
            rayon_id, label=body.get("label"), universe_id=body.get("universeId"),
            sort_order=body.get("sortOrder"), archived=body.get("archived"),
        )
        send(resp, {"rayon": RayonOut().dump(rayon)})

    def on_delete(self, req, resp, rayon_id: str) -> None:
        """Hard delete; 409 CONFLICT with `details.referencedBy` while ad spaces or campaigns reference it.
        ---
        summary: Delete a rayon
        tags: [store zones]
        responses:
          200:
            description: deleted
            content:
              application/json:
                schema: MarketplaceDeletedOutEnvelope
        """
        store_zones.delete_rayon(rayon_id)
        send(resp, MarketplaceDeletedOut().dump({"id": rayon_id, "deleted": True}))


def routes(deps) -> list[Route]:
    return [
        Route("/api/admin/store-zones", StoreZoneTree(), CATALOG),
        Route("/api/admin/store-zones/universes", Universes(), CATALOG),
        Route("/api/admin/store-zones/universes/{universe_id}", Universe(), CATALOG),
        Route("/api/admin/store-zones/rayons", Rayons(), CATALOG),
        Route("/api/admin/store-zones/rayons/{rayon_id}", Rayon(), CATALOG),
        Route("/api/store-zones", ActiveStoreZoneTree(), BUSINESS_SESSION),
    ]
