"""Stores and ad spaces of distributors, and the ad-space search industrials book from.

Every query that touches a distributor's own data carries `organization_id` in its WHERE: a
store of another organization is "not found", never "forbidden".
"""

from __future__ import annotations

from peewee import IntegrityError, fn

from backend.db import transaction
from backend.errors import NotFound, ValidationError
from backend.listing import ListParams, Page, paginate
from backend.marketplace.kyb import require_kyb_approved
from backend.marketplace.models import AdSpace, Store, violated_constraint
from backend.marketplace.store_zones import check_placement

STORE_SORTS = {"name": Store.name, "city": Store.city, "createdAt": Store.created_at}
AD_SPACE_SORTS = {
    "name": AdSpace.name,
    "priceCents": AdSpace.price_cents,
    "city": Store.city,
    "createdAt": AdSpace.created_at,
}


def create_store(
    *, organization_id: str, name: str, street: str, postal_code: str, city: str, country: str
) -> Store:
    return Store.create(
        organization_id=organization_id, name=name.strip(), street=street.strip(),
        postal_code=postal_code.strip(), city=city.strip(), country=country.upper(),
    )


def list_stores(*, organization_id: str, params: ListParams) -> Page:
    return paginate(
        Store.select().where(Store.organization_id == organization_id), params, sorts=STORE_SORTS,
        default_sort="name", tiebreaker=Store.id, search_columns=(Store.name, Store.city),
    )


def publish_ad_space(
    *, organization_id: str, store_id: str, name: str, promo_furniture_type_id: str,
    placement_universe_id: str, placement_rayon_id: str | None, price_cents: int,
) -> AdSpace:
    """Create an ad space in one of the organization's stores; refused until KYB is approved."""
    with transaction():
        require_kyb_approved(organization_id)
        store = Store.get_or_none(Store.id == store_id, Store.organization_id == organization_id)
        if store is None:
            raise NotFound("store not found")
        check_placement(placement_universe_id, placement_rayon_id)
        try:
            with transaction():
                ad_space = AdSpace.create(
                    store=store, name=name.strip(), promo_furniture_type=promo_furniture_type_id,
                    placement_universe=placement_universe_id, placement_rayon=placement_rayon_id,
                    price_cents=price_cents,
                )
        except IntegrityError as exc:
            if violated_constraint(exc) == "ad_space_promo_furniture_type_id_fkey":
                raise ValidationError("unknown furniture type",
                                      fields={"promoFurnitureTypeId": ["unknown"]}) from None
            raise
    ad_space.store = store
    return ad_space


def search_ad_spaces(
    *, params: ListParams, universe_id: str | None = None, rayon_id: str | None = None,
    city: str | None = None, organization_id: str | None = None,
) -> Page:
    """Ad spaces with their store, one query per page; filters combine with AND. `city` matches
    the store's city ignoring case; `search` looks in the ad-space and store names."""
    query = AdSpace.select(AdSpace, Store).join(Store)
    if universe_id:
        query = query.where(AdSpace.placement_universe == universe_id)
    if rayon_id:
        query = query.where(AdSpace.placement_rayon == rayon_id)
    if city:
        query = query.where(fn.LOWER(Store.city) == city.strip().lower())
    if organization_id:
        query = query.where(Store.organization_id == organization_id)
    return paginate(query, params, sorts=AD_SPACE_SORTS, default_sort="createdAt", tiebreaker=AdSpace.id,
                    search_columns=(AdSpace.name, Store.name))


def ad_space(ad_space_id: str) -> AdSpace:
    found = AdSpace.select(AdSpace, Store).join(Store).where(AdSpace.id == ad_space_id).first()
    if found is None:
        raise NotFound("ad space not found")
    return found

