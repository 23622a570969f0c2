"""Furniture types, distributors' stores and ad spaces, and the ad-space search."""

from __future__ import annotations

from api.access import BUSINESS_SESSION, admin, roles
from api.responses import load, send
from api.routes import Route
from backend.errors import Forbidden
from backend.listing import ListParams
from backend.marketplace import catalog, furniture
from backend.marketplace.furniture import ZoneSpec
from schemas.marketplace.catalog import (
    AdSpaceIn,
    AdSpaceOut,
    AdSpaceQuery,
    FurnitureTypeIn,
    FurnitureTypeOut,
    ListQuery,
    StoreIn,
    StoreOut,
)

DISTRIBUTOR = roles("distributor", kyb_required=True)


def acting_organization(req, *actor_types: str) -> str:
    """The caller's active organization, which must be of one of `actor_types`: every
    marketplace query is scoped to it."""
    organization_id = req.context.principal.active_organization_id or ""
    if organization_id.partition(":")[0] not in actor_types:
        raise Forbidden(f"an active {' or '.join(actor_types)} organization is required")
    return organization_id


def list_params(req, schema=None) -> tuple[ListParams, dict]:
    """The page parameters and the other filters of a list's query string."""
    query = (schema or ListQuery()).load(req.params)
    return ListParams.from_query(query), query


def _zone_specs(body: dict) -> list[ZoneSpec]:
    return [
        ZoneSpec(code=z["code"], label=z["label"], face_quantity=z["faceQuantity"], printable=z["printable"],
                 width_mm=z["widthMm"], height_mm=z["heightMm"])
        for z in body["zones"]
    ]


class FurnitureTypes:
    def on_post(self, req, resp) -> None:
        """Create a furniture type with its zones (version 1).
        ---
        summary: Create a furniture type
        tags: [catalog]
        requestBody:
          content:
            application/json:
              schema: FurnitureTypeIn
        responses:
          201:
            description: the type with its zone ids
            content:
              application/json:
                schema: FurnitureTypeAnswerEnvelope
        """
        body = load(req, FurnitureTypeIn())
        version = furniture.create_furniture_type(
            name=body["name"], zones=_zone_specs(body), printer_organization_id=body["printerOrganizationId"],
            created_by_user_id=req.context.principal.user_id,
        )
        send(resp, {"furnitureType": FurnitureTypeOut().dump(version)}, status=201)


class FurnitureTypeList:
    def on_get(self, req, resp) -> None:
        """Furniture types (current configuration), paginated; sortBy `name` or `createdAt`.
        ---
        summary: List furniture types
        tags: [catalog]
        parameters:
          - {in: query, schema: ListQuery}
        responses:
          200:
            description: a page of types
            content:
              application/json:
                schema: FurnitureTypePageEnvelope
        """
        params, _ = list_params(req)
        send(resp, furniture.list_furniture_types(params).as_dict(FurnitureTypeOut().dump))


class FurnitureType:
    def on_put(self, req, resp, furniture_type_id: str) -> None:
        """Edit a type: writes a new version; reservations keep the version they froze.
        ---
        summary: Edit a furniture type (new version)
        tags: [catalog]
        requestBody:
          content:
            application/json:
              schema: FurnitureTypeIn
        responses:
          200:
            description: the new current version
            content:
              application/json:
                schema: FurnitureTypeAnswerEnvelope
        """
        body = load(req, FurnitureTypeIn())
        version = furniture.revise_furniture_type(
            furniture_type_id, name=body["name"], zones=_zone_specs(body),
            printer_organization_id=body["printerOrganizationId"], created_by_user_id=req.context.principal.user_id,
        )
        send(resp, {"furnitureType": FurnitureTypeOut().dump(version)})


class Stores:
    def on_post(self, req, resp) -> None:
        """Create a store of the caller's distributor organization.
        ---
        summary: Create a store
        tags: [catalog]
        requestBody:
          content:
            application/json:
              schema: StoreIn
        responses:
          201:
            description: the store
            content:
              application/json:
                schema: StoreAnswerEnvelope
        """
        body = load(req, StoreIn())
        address = body["address"]
        store = catalog.create_store(
            organization_id=acting_organization(req, "distributor"), name=body["name"], street=address["street"],
            postal_code=address["postalCode"], city=address["city"], country=address["country"],
        )
        send(resp, {"store": StoreOut().dump(store)}, status=201)

    def on_get(self, req, resp) -> None:
        """The caller's stores, paginated; sortBy `name`, `city` or `createdAt`; search in name and city.
        ---
        summary: List my stores
        tags: [catalog]
        parameters:
          - {in: query, schema: ListQuery}
        responses:
          200:
            description: a page of stores
            content:
              application/json:
                schema: StorePageEnvelope
        """
        params, _ = list_params(req)
        page = catalog.list_stores(organization_id=acting_organization(req, "distributor"), params=params)
        send(resp, page.as_dict(StoreOut().dump))


class AdSpaces:
    def on_post(self, req, resp) -> None:
        """Publish an ad space in one of the caller's stores; 403 (`details.reason = kyb_not_approved`)
        until the distributor's KYB is approved.
        ---
        summary: Publish an ad space
        tags: [catalog]
        requestBody:
          content:
            application/json:
              schema: AdSpaceIn
        responses:
          201:
            description: the ad space
            content:
              application/json:
                schema: AdSpaceAnswerEnvelope
        """
        body = load(req, AdSpaceIn())
        ad_space = catalog.publish_ad_space(
            organization_id=acting_organization(req, "distributor"), store_id=body["storeId"], name=body["name"],
            promo_furniture_type_id=body["promoFurnitureTypeId"], placement_universe_id=body["placementUniverseId"],
            placement_rayon_id=body["placementRayonId"], price_cents=body["priceCents"],
        )
        send(resp, {"adSpace": AdSpaceOut().dump(ad_space)}, status=201)


class AdSpaceSearch:
    def on_get(self, req, resp) -> None:
        """Search ad spaces by `universeId`, `rayonId`, store `city` (case-insensitive), the store's
        distributor `organizationId`, `search` in the ad-space and store names; sortBy `createdAt`
        (default), `name`, `priceCents`, `city`.
        ---
        summary: Search ad spaces
        tags: [catalog]
        parameters:
          - {in: query, schema: AdSpaceQuery}
        responses:
          200:
            description: a page of ad spaces with their store
            content:
              application/json:
                schema: AdSpacePageEnvelope
        """
        params, query = list_params(req, AdSpaceQuery())
        page = catalog.search_ad_spaces(
            params=params, universe_id=query["universeId"], rayon_id=query["rayonId"], city=query["city"],
            organization_id=query["organizationId"],
        )
        send(resp, page.as_dict(AdSpaceOut().dump))


def routes(deps) -> list[Route]:
    catalog_admin = admin("catalog.manage.all")
    return [
        Route("/api/admin/furniture-types", FurnitureTypes(), catalog_admin),
        Route("/api/admin/furniture-types/{furniture_type_id}", FurnitureType(), catalog_admin),
        Route("/api/furniture-types", FurnitureTypeList(), BUSINESS_SESSION),
        Route("/api/distributor/stores", Stores(), DISTRIBUTOR),
        Route("/api/distributor/ad-spaces", AdSpaces(), DISTRIBUTOR),
        Route("/api/ad-spaces", AdSpaceSearch(), BUSINESS_SESSION),
    ]
