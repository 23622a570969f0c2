"""Marketplace catalog schemas: store zones, furniture types, stores, ad spaces (one per use case)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend import clock
from backend.marketplace.catalog import AD_SPACE_SORTS, STORE_SORTS
from backend.marketplace.furniture import FURNITURE_SORTS
from schemas.common import AnsweredDirectly, JsonBoolean, LegalText, ListQuery, UtcDateTime, page_of, sort_by

LABEL = validate.Length(min=1, max=120)
NAME = validate.Length(min=1, max=160)


# --- Store zones (Specification A) ---


class UniverseIn(Schema):
    label = fields.String(required=True, validate=LABEL)
    isTransversal = JsonBoolean(load_default=False)


class UniversePatch(Schema):
    label = fields.String(validate=LABEL)
    isTransversal = JsonBoolean()
    sortOrder = fields.Integer(validate=validate.Range(min=-1_000_000, max=1_000_000))
    archived = JsonBoolean()


class RayonIn(Schema):
    universeId = fields.String(required=True, validate=validate.Length(min=1, max=36))
    label = fields.String(required=True, validate=LABEL)


class RayonPatch(Schema):
    label = fields.String(validate=LABEL)
    universeId = fields.String(validate=validate.Length(min=1, max=36))
    sortOrder = fields.Integer(validate=validate.Range(min=-1_000_000, max=1_000_000))
    archived = JsonBoolean()


class RayonOut(Schema):
    id = fields.String(required=True)
    universeId = fields.String(attribute="universe_id", required=True)
    code = fields.String(required=True, metadata={"example": "RAYON_CONSERVES"})
    label = fields.String(required=True)
    normalizedLabel = fields.String(attribute="normalized_label", required=True)
    sortOrder = fields.Integer(attribute="sort_order", required=True)
    archivedAt = UtcDateTime(attribute="archived_at", allow_none=True)


class UniverseOut(Schema):
    id = fields.String(required=True)
    code = fields.String(required=True, metadata={"example": "UNIV_EPICERIE_SALEE"})
    label = fields.String(required=True)
    normalizedLabel = fields.String(attribute="normalized_label", required=True)
    sortOrder = fields.Integer(attribute="sort_order", required=True)
    isTransversal = fields.Boolean(attribute="is_transversal", required=True)
    archivedAt = UtcDateTime(attribute="archived_at", allow_none=True)


class UniverseTreeOut(UniverseOut):
    rayons = fields.List(fields.Nested(RayonOut), attribute="rayon_list", required=True)


class StoreZoneTreeOut(Schema):
    universes = fields.List(fields.Nested(UniverseTreeOut), required=True)


class UniverseAnswer(Schema):
    universe = fields.Nested(UniverseOut, required=True)


class RayonAnswer(Schema):
    rayon = fields.Nested(RayonOut, required=True)


class MarketplaceDeletedOut(Schema):
    id = fields.String(required=True)
    deleted = fields.Boolean(required=True)


# --- Furniture types ---


class FurnitureZoneIn(Schema):
    code = fields.String(required=True, validate=validate.Regexp(r"^[A-Za-z0-9_.-]{1,60}$"))
    label = fields.String(required=True, validate=LABEL)
    faceQuantity = fields.Integer(required=True, validate=validate.Range(min=1, max=1000))
    printable = fields.Boolean(required=True)
    widthMm = fields.Integer(required=True, validate=validate.Range(min=1, max=100_000))
    heightMm = fields.Integer(required=True, validate=validate.Range(min=1, max=100_000))


class FurnitureTypeIn(Schema):
    name = fields.String(required=True, validate=LABEL)
    printerOrganizationId = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=60))
    zones = fields.List(fields.Nested(FurnitureZoneIn), required=True, validate=validate.Length(min=1, max=100))


class FurnitureZoneOut(Schema):
    id = fields.String(required=True)
    code = fields.String(required=True)
    label = fields.String(required=True)
    faceQuantity = fields.Integer(attribute="face_quantity", required=True)
    printable = fields.Boolean(required=True)
    widthMm = fields.Integer(attribute="width_mm", required=True)
    heightMm = fields.Integer(attribute="height_mm", required=True)


class FurnitureTypeOut(Schema):
    id = fields.String(attribute="furniture_type_id", required=True)
    version = fields.Integer(required=True, metadata={"description": "increases at every edit"})
    versionId = fields.String(attribute="id", required=True,
                              metadata={"description": "the configuration reservations freeze"})
    name = fields.String(required=True)
    printerOrganizationId = fields.String(attribute="printer_organization_id", allow_none=True)
    zones = fields.List(fields.Nested(FurnitureZoneOut), attribute="zone_list", required=True)
    createdAt = UtcDateTime(attribute="created_at")


class FurnitureTypeAnswer(Schema):
    furnitureType = fields.Nested(FurnitureTypeOut, required=True)


# --- Stores and ad spaces ---


class StoreAddressIn(Schema):
    street = LegalText(200, required=True)
    postalCode = LegalText(20, required=True)
    city = LegalText(120, required=True)
    country = fields.String(required=True, validate=validate.Regexp(r"^[A-Za-z]{2}$"))


class StoreIn(Schema):
    name = fields.String(required=True, validate=NAME)
    address = fields.Nested(StoreAddressIn, required=True)


class StoreAddressOut(Schema):
    street = fields.String(required=True)
    postalCode = fields.String(attribute="postal_code", required=True)
    city = fields.String(required=True)
    country = fields.String(required=True)


_STORE_ADDRESS = StoreAddressOut()  # one instance: building a schema per store was most of a search page's dump


class StoreOut(AnsweredDirectly):
    id = fields.String(required=True)
    organizationId = fields.String(attribute="organization_id", required=True)
    name = fields.String(required=True)
    address = fields.Function(lambda store: _STORE_ADDRESS.dump(store), metadata={"type": "object"})
    createdAt = UtcDateTime(attribute="created_at")

    @staticmethod
    def answer(store) -> dict:
        return {
            "id": store.id, "organizationId": store.organization_id, "name": store.name,
            "address": {"street": store.street, "postalCode": store.postal_code, "city": store.city,
                        "country": store.country},
            "createdAt": clock.iso(store.created_at),
        }


class StoreAnswer(Schema):
    store = fields.Nested(StoreOut, required=True)


class AdSpaceIn(Schema):
    storeId = fields.String(required=True, validate=validate.Length(min=1, max=36))
    name = fields.String(required=True, validate=NAME)
    promoFurnitureTypeId = fields.String(required=True, validate=validate.Length(min=1, max=36))
    placementUniverseId = fields.String(required=True, validate=validate.Length(min=1, max=36))
    placementRayonId = fields.String(load_default=None, allow_none=True, validate=validate.Length(min=1, max=36))
    priceCents = fields.Integer(required=True, strict=True, validate=validate.Range(min=0, max=1_000_000_000))


class FurnitureTypeListQuery(ListQuery):
    sortBy = sort_by(FURNITURE_SORTS, "name")


class StoreListQuery(ListQuery):
    sortBy = sort_by(STORE_SORTS, "name")


class AdSpaceQuery(ListQuery):
    sortBy = sort_by(AD_SPACE_SORTS, "createdAt")
    universeId = fields.String(load_default=None)
    rayonId = fields.String(load_default=None)
    city = fields.String(load_default=None)
    organizationId = fields.String(load_default=None, metadata={
        "description": "the distributor organization owning the store (a distributor lists its own)"})


class AdSpaceOut(AnsweredDirectly):
    id = fields.String(required=True)
    name = fields.String(required=True)
    storeId = fields.String(attribute="store_id", required=True)
    store = fields.Nested(StoreOut, required=True)
    promoFurnitureTypeId = fields.String(attribute="promo_furniture_type_id", required=True)
    placementUniverseId = fields.String(attribute="placement_universe_id", required=True)
    placementRayonId = fields.String(attribute="placement_rayon_id", allow_none=True)
    priceCents = fields.Integer(attribute="price_cents", required=True,
                                metadata={"description": "store rent excluding tax, before commission"})
    createdAt = UtcDateTime(attribute="created_at")

    @staticmethod
    def answer(ad_space) -> dict:
        """An ad space (a model with its store, or a search's `AdSpaceRow`)."""
        return {
            "id": ad_space.id, "name": ad_space.name, "storeId": ad_space.store_id,
            "store": StoreOut.answer(ad_space.store),
            "promoFurnitureTypeId": ad_space.promo_furniture_type_id,
            "placementUniverseId": ad_space.placement_universe_id,
            "placementRayonId": ad_space.placement_rayon_id, "priceCents": ad_space.price_cents,
            "createdAt": clock.iso(ad_space.created_at),
        }


class AdSpacePage(AnsweredDirectly, page_of(AdSpaceOut)):
    """A search page (`backend.listing.Page` of `AdSpaceRow`), its items answered directly."""

    @staticmethod
    def answer(page) -> dict:
        return page.as_dict(AdSpaceOut.answer)


class AdSpaceAnswer(Schema):
    adSpace = fields.Nested(AdSpaceOut, required=True)
