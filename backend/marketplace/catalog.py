"""Stores and ad spaces of distributors, and the ad-space search industrials book from.

Every query that touches a distributor's own data carries `organization_id` in its WHERE: a
store of another organization is "not found", never "forbidden".
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from peewee import IntegrityError

from backend.db import database, transaction
from backend.errors import NotFound, ValidationError
from backend.listing import ListParams, Page, like_pattern, paginate, sort_column
from backend.marketplace.kyb import require_kyb_approved
from backend.marketplace.models import AdSpace, Store, violated_constraint
from backend.marketplace.store_zones import check_placement

STORE_SORTS = {"name": Store.name, "city": Store.city, "createdAt": Store.created_at}
# The search's sort columns, whitelisted: a sort is one of these texts, never the request's.
AD_SPACE_SORTS = {"name": "a.name", "priceCents": "a.price_cents", "city": "s.city", "createdAt": "a.created_at"}


class StoreRow(NamedTuple):
    """A store as the search reads it: what `schemas.marketplace.catalog.StoreOut` answers."""

    id: str
    organization_id: str
    name: str
    street: str
    postal_code: str
    city: str
    country: str
    created_at: datetime


class AdSpaceRow(NamedTuple):
    """An ad space found by the search, with its store (`schemas.marketplace.catalog.AdSpaceOut`)."""

    id: str
    store_id: str
    name: str
    promo_furniture_type_id: str
    placement_universe_id: str
    placement_rayon_id: str | None
    price_cents: int
    created_at: datetime
    store: StoreRow


# The search statement, written out once: a page and its total (`COUNT(*) OVER ()`) in one round
# trip. Only these fixed texts and a whitelisted sort column go into it; every value is a parameter.
_SEARCH_FROM = "FROM ad_space a JOIN store s ON s.id = a.store_id WHERE {where}"
_SEARCH_PAGE = (
    "SELECT a.id, a.store_id, a.name, a.promo_furniture_type_id, a.placement_universe_id, a.placement_rayon_id,"
    " a.price_cents, a.created_at, s.id, s.organization_id, s.name, s.street, s.postal_code, s.city, s.country,"
    " s.created_at, COUNT(*) OVER () " + _SEARCH_FROM +
    " ORDER BY {sort} {direction} NULLS LAST, a.id {direction} LIMIT %s OFFSET %s"
)
_SEARCH_COUNT = "SELECT COUNT(*) " + _SEARCH_FROM
_AD_SPACE_COLUMNS = len(AdSpaceRow._fields) - 1


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
    """Ad spaces with their store (`AdSpaceRow`), one statement per page; filters combine with
    AND. `city` matches the store's city ignoring case; `search` looks in the ad-space and store
    names. The most asked-for list of the marketplace: no query building and no model per row."""
    sort = sort_column(params, AD_SPACE_SORTS, "createdAt")
    filters = [
        ("a.placement_universe_id = %s", universe_id or None),
        ("a.placement_rayon_id = %s", rayon_id or None),
        ("lower(s.city) = %s", city.strip().lower() if city else None),
        ("s.organization_id = %s", organization_id or None),
    ]
    conditions = [condition for condition, value in filters if value is not None]
    values = [value for _, value in filters if value is not None]
    if params.search:
        pattern = like_pattern(params.search)
        conditions.append("(a.name ILIKE %s OR s.name ILIKE %s)")
        values += [pattern, pattern]
    where = " AND ".join(conditions) or "TRUE"
    direction = "DESC" if params.sort_dir == "desc" else "ASC"
    offset = (params.page - 1) * params.page_size
    statement = _SEARCH_PAGE.format(where=where, sort=sort, direction=direction)
    rows = database.execute_sql(statement, (*values, params.page_size, offset)).fetchall()
    if rows:
        total = rows[0][-1]
    elif offset:  # past the last page: the window gave no row to read the total from
        total = database.execute_sql(_SEARCH_COUNT.format(where=where), values).fetchone()[0]
    else:
        total = 0
    items = [AdSpaceRow(*row[:_AD_SPACE_COLUMNS], StoreRow(*row[_AD_SPACE_COLUMNS:-1])) for row in rows]
    return Page(items=items, total=total, page=params.page, page_size=params.page_size)


def ad_space(ad_space_id: str) -> AdSpace:
    found = AdSpace.select(AdSpace, Store).join(Store).where(AdSpace.id == ad_space_id).first()
    if found is None:
        raise NotFound("ad space not found")
    return found

