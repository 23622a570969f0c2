"""Furniture types, distributors' stores and ad spaces, and the ad-space search."""

from __future__ import annotations

from api.access import BUSINESS_SESSION, CATALOG_ADMIN, DISTRIBUTOR, Route
from api.operations import operation
from api.requests import acting_organization
from backend.listing import ListParams
from backend.marketplace import catalog, furniture
from backend.marketplace.furniture import ZoneSpec
from schemas.common import page_of
from schemas.marketplace.catalog import (
    AdSpaceAnswer,
    AdSpaceIn,
    AdSpacePage,
    AdSpaceQuery,
    FurnitureTypeAnswer,
    FurnitureTypeIn,
    FurnitureTypeListQuery,
    FurnitureTypeOut,
    StoreAnswer,
    StoreIn,
    StoreListQuery,
    StoreOut,
)

TAGS = ("catalog",)


def _zone_specs(body: dict) -> list[ZoneSpec]:
    return [
        ZoneSpec(code=z["code"], label=z["label"], face_quantity=z["faceQuantity"], printable=z["printable"],
                 width_mm=z["widthMm"], height_mm=z["heightMm"])
        for z in body["zones"]
    ]


class FurnitureTypes:
    @operation("Create a furniture type", description="Create a furniture type with its zones (version 1).",
               tags=TAGS, body=FurnitureTypeIn, answer=FurnitureTypeAnswer, status=201,
               answer_description="the type with its zone ids")
    def on_post(self, req, resp, body: dict) -> dict:
        version = furniture.create_furniture_type(
            name=body["name"], zones=_zone_specs(body), printer_organization_id=body["printerOrganizationId"],
            created_by_user_id=req.context.principal.user_id,
        )
        return {"furnitureType": version}


class FurnitureTypeList:
    @operation("List furniture types",
               description="Furniture types (current configuration), paginated.",
               tags=TAGS, query=FurnitureTypeListQuery, answer=page_of(FurnitureTypeOut))
    def on_get(self, req, resp, query: dict):
        return furniture.list_furniture_types(ListParams.from_query(query))


class FurnitureType:
    @operation("Edit a furniture type (new version)",
               description="Writes a new version; reservations keep the version they froze.",
               tags=TAGS, body=FurnitureTypeIn, answer=FurnitureTypeAnswer,
               answer_description="the new current version")
    def on_put(self, req, resp, furniture_type_id: str, body: dict) -> dict:
        version = furniture.revise_furniture_type(
            furniture_type_id, name=body["name"], zones=_zone_specs(body),
            printer_organization_id=body["printerOrganizationId"], created_by_user_id=req.context.principal.user_id,
        )
        return {"furnitureType": version}


class Stores:
    @operation("Create a store", description="Create a store of the caller's distributor organization.",
               tags=TAGS, body=StoreIn, answer=StoreAnswer, status=201)
    def on_post(self, req, resp, body: dict) -> dict:
        address = body["address"]
        store = catalog.create_store(
            organization_id=acting_organization(req, "distributor"), name=body["name"], street=address["street"],
            postal_code=address["postalCode"], city=address["city"], country=address["country"],
        )
        return {"store": store}

    @operation("List my stores",
               description="The caller's stores, paginated; search in name and city.",
               tags=TAGS, query=StoreListQuery, answer=page_of(StoreOut))
    def on_get(self, req, resp, query: dict):
        return catalog.list_stores(organization_id=acting_organization(req, "distributor"),
                                   params=ListParams.from_query(query))


class AdSpaces:
    @operation("Publish an ad space",
               description="Publish an ad space in one of the caller's stores; 403 (`details.reason = "
                           "kyb_not_approved`) until the distributor's KYB is approved.",
               tags=TAGS, body=AdSpaceIn, answer=AdSpaceAnswer, status=201)
    def on_post(self, req, resp, body: dict) -> dict:
        ad_space = catalog.publish_ad_space(
            organization_id=acting_organization(req, "distributor"), store_id=body["storeId"], name=body["name"],
            promo_furniture_type_id=body["promoFurnitureTypeId"], placement_universe_id=body["placementUniverseId"],
            placement_rayon_id=body["placementRayonId"], price_cents=body["priceCents"],
        )
        return {"adSpace": ad_space}


class AdSpaceSearch:
    @operation("Search ad spaces",
               description="Search ad spaces by `universeId`, `rayonId`, store `city` (case-insensitive), the "
                           "store's distributor `organizationId`, `search` in the ad-space and store names; sortBy "
                           "`createdAt` (default), `name`, `priceCents`, `city`.",
               tags=TAGS, query=AdSpaceQuery, answer=AdSpacePage,
               answer_description="a page of ad spaces with their store")
    def on_get(self, req, resp, query: dict):
        return catalog.search_ad_spaces(
            params=ListParams.from_query(query), universe_id=query["universeId"], rayon_id=query["rayonId"],
            city=query["city"], organization_id=query["organizationId"],
        )


def routes(deps) -> list[Route]:
    return [
        Route("/api/admin/furniture-types", FurnitureTypes(), CATALOG_ADMIN),
        Route("/api/admin/furniture-types/{furniture_type_id}", FurnitureType(), CATALOG_ADMIN),
        Route("/api/furniture-types", FurnitureTypeList(), BUSINESS_SESSION),
        Route("/api/distributor/stores", Stores(), DISTRIBUTOR),
        Route("/api/distributor/ad-spaces", AdSpaces(), DISTRIBUTOR),
        Route("/api/ad-spaces", AdSpaceSearch(), BUSINESS_SESSION),
    ]
