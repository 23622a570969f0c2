"""Store zones (Specification A): the admin universe and rayon tree (permission `catalog.manage.all`),
and its active part, readable by every signed-in user."""

from __future__ import annotations

from api.access import BUSINESS_SESSION, CATALOG_ADMIN, Route
from api.operations import operation
from backend.marketplace import store_zones
from schemas.marketplace.catalog import (
    MarketplaceDeletedOut,
    RayonAnswer,
    RayonIn,
    RayonPatch,
    StoreZoneTreeOut,
    UniverseAnswer,
    UniverseIn,
    UniversePatch,
)

TAGS = ("store zones",)


class StoreZoneTree:
    @operation("Store-zone tree",
               description="The tree of universes and rayons, both ordered by sortOrder (archived ones included).",
               tags=TAGS, answer=StoreZoneTreeOut, answer_description="universes with their rayons")
    def on_get(self, req, resp) -> dict:
        return {"universes": store_zones.zone_tree()}


class ActiveStoreZoneTree:
    @operation("Store zones (read, any signed-in user)",
               description="The active universes and rayons (archived ones left out), ordered by sortOrder: the "
                           "ids a distributor places its ad spaces on and an industrial targets and searches by.",
               tags=TAGS, answer=StoreZoneTreeOut, answer_description="active universes with their active rayons")
    def on_get(self, req, resp) -> dict:
        return {"universes": store_zones.zone_tree(active_only=True)}


class Universes:
    @operation("Create a universe", description="Its code is derived from the label.", tags=TAGS,
               body=UniverseIn, answer=UniverseAnswer, status=201,
               answer_description="the universe (409 CONFLICT when the normalized label exists)")
    def on_post(self, req, resp, body: dict) -> dict:
        return {"universe": store_zones.create_universe(label=body["label"], is_transversal=body["isTransversal"])}


class Universe:
    @operation("Update a universe",
               description="Rename (the code stays), flag, reorder, archive or un-archive (cascading to the rayons).",
               tags=TAGS, body=UniversePatch, answer=UniverseAnswer)
    def on_patch(self, req, resp, universe_id: str, body: dict) -> dict:
        universe = store_zones.update_universe(
            universe_id, label=body.get("label"), is_transversal=body.get("isTransversal"),
            sort_order=body.get("sortOrder"), archived=body.get("archived"),
        )
        return {"universe": universe}

    @operation("Delete a universe",
               description="Hard delete; 409 CONFLICT with `details.referencedBy` while rayons, ad spaces or "
                           "campaigns reference it.",
               tags=TAGS, answer=MarketplaceDeletedOut)
    def on_delete(self, req, resp, universe_id: str) -> dict:
        store_zones.delete_universe(universe_id)
        return {"id": universe_id, "deleted": True}


class Rayons:
    @operation("Create a rayon", description="Create a rayon in a universe; its code is derived from the label.",
               tags=TAGS, body=RayonIn, answer=RayonAnswer, status=201,
               answer_description="the rayon (409 CONFLICT when the label exists in the universe)")
    def on_post(self, req, resp, body: dict) -> dict:
        return {"rayon": store_zones.create_rayon(universe_id=body["universeId"], label=body["label"])}


class Rayon:
    @operation("Update a rayon",
               description="Rename (the code stays), move to another universe, reorder, archive or un-archive.",
               tags=TAGS, body=RayonPatch, answer=RayonAnswer)
    def on_patch(self, req, resp, rayon_id: str, body: dict) -> dict:
        rayon = store_zones.update_rayon(
            rayon_id, label=body.get("label"), universe_id=body.get("universeId"),
            sort_order=body.get("sortOrder"), archived=body.get("archived"),
        )
        return {"rayon": rayon}

    @operation("Delete a rayon",
               description="Hard delete; 409 CONFLICT with `details.referencedBy` while ad spaces or campaigns "
                           "reference it.",
               tags=TAGS, answer=MarketplaceDeletedOut)
    def on_delete(self, req, resp, rayon_id: str) -> dict:
        store_zones.delete_rayon(rayon_id)
        return {"id": rayon_id, "deleted": True}


def routes(deps) -> list[Route]:
    return [
        Route("/api/admin/store-zones", StoreZoneTree(), CATALOG_ADMIN),
        Route("/api/admin/store-zones/universes", Universes(), CATALOG_ADMIN),
        Route("/api/admin/store-zones/universes/{universe_id}", Universe(), CATALOG_ADMIN),
        Route("/api/admin/store-zones/rayons", Rayons(), CATALOG_ADMIN),
        Route("/api/admin/store-zones/rayons/{rayon_id}", Rayon(), CATALOG_ADMIN),
        Route("/api/store-zones", ActiveStoreZoneTree(), BUSINESS_SESSION),
    ]
