"""Campaigns of industrials: a name, dates, and the store zones they target.

`universeIds` and `rayonIds` are unconstrained references (Specification A): they are stored
as given, without foreign keys, and the store-zone deletion guard looks them up.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from backend.errors import NotFound, ValidationError
from backend.listing import ListParams, Page, paginate
from backend.marketplace.models import Campaign

CAMPAIGN_SORTS = {"name": Campaign.name, "startsAt": Campaign.starts_at, "createdAt": Campaign.created_at}


def create_campaign(
    *, organization_id: str, name: str, starts_at: datetime, ends_at: datetime,
    universe_ids: Sequence[str] = (), rayon_ids: Sequence[str] = (), created_by_user_id: str | None = None,
) -> Campaign:
    if ends_at <= starts_at:
        raise ValidationError("the campaign must end after it starts", fields={"endsAt": ["must be after startsAt"]})
    return Campaign.create(
        organization_id=organization_id, name=name.strip(), starts_at=starts_at, ends_at=ends_at,
        universe_ids=list(dict.fromkeys(universe_ids)), rayon_ids=list(dict.fromkeys(rayon_ids)),
        created_by_user_id=created_by_user_id,
    )


def list_campaigns(*, organization_id: str, params: ListParams) -> Page:
    return paginate(
        Campaign.select().where(Campaign.organization_id == organization_id), params, sorts=CAMPAIGN_SORTS,
        default_sort="createdAt", tiebreaker=Campaign.id, search_columns=(Campaign.name,),
    )


def owned_campaign(*, organization_id: str, campaign_id: str) -> Campaign:
    campaign = Campaign.get_or_none(Campaign.id == campaign_id, Campaign.organization_id == organization_id)
    if campaign is None:
        raise NotFound("campaign not found")
    return campaign
