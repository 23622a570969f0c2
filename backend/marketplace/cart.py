"""The industrial's cart: ad spaces picked for a campaign, priced with the Specification C
breakdown, and the checkout that turns every item into a reservation.

The cart belongs to the organization (every member sees and fills the same cart). Prices are
read live until checkout, which freezes them on the reservations.
"""

from __future__ import annotations

from dataclasses import dataclass

from peewee import IntegrityError

from backend.db import transaction
from backend.errors import Conflict, NotFound
from backend.marketplace import pricing, reservations
from backend.marketplace.campaigns import owned_campaign
from backend.marketplace.catalog import ad_space
from backend.marketplace.kyb import require_kyb_approved
from backend.marketplace.models import AdSpace, Campaign, CartItem, Reservation, Store, violated_constraint


@dataclass(frozen=True)
class CartLine:
    item: CartItem
    pricing: pricing.Pricing


@dataclass(frozen=True)
class Cart:
    lines: list[CartLine]
    totals: pricing.Totals


def add_cart_item(
    *, organization_id: str, campaign_id: str, ad_space_id: str, user_id: str | None, rate_bps: int
) -> CartLine:
    """The new line, priced; 409 when the ad space is already in the cart for this campaign."""
    campaign = owned_campaign(organization_id=organization_id, campaign_id=campaign_id)
    space = ad_space(ad_space_id)
    try:
        with transaction():
            item = CartItem.create(
                organization_id=organization_id, campaign=campaign, ad_space=space, added_by_user_id=user_id
            )
    except IntegrityError as exc:
        if violated_constraint(exc) == "cart_item_key":
            raise Conflict("this ad space is already in the cart for this campaign") from None
        raise
    return CartLine(item, pricing.price(space.price_cents, rate_bps))


def remove_cart_item(*, organization_id: str, item_id: str) -> None:
    deleted = CartItem.delete().where(CartItem.id == item_id, CartItem.organization_id == organization_id).execute()
    if not deleted:
        raise NotFound("cart item not found")


def _items(organization_id: str, *, lock: bool = False) -> list[CartItem]:
    query = (
        CartItem.select(CartItem, Campaign, AdSpace, Store)
        .join(Campaign)
        .switch(CartItem)
        .join(AdSpace)
        .join(Store)
        .where(CartItem.organization_id == organization_id)
        .order_by(CartItem.created_at, CartItem.id)
    )
    if lock:
        query = query.for_update(of=CartItem)
    return list(query)


def current_cart(*, organization_id: str, rate_bps: int) -> Cart:
    lines = [CartLine(item, pricing.price(item.ad_space.price_cents, rate_bps)) for item in _items(organization_id)]
    return Cart(lines=lines, totals=pricing.totals([line.pricing for line in lines], rate_bps))


def checkout(*, organization_id: str, user_id: str | None, rate_bps: int) -> list[Reservation]:
    """One `pending_review` reservation per item, pricing frozen, then the cart is empty.

    403 (`kyb_not_approved`) until the organization's KYB is approved; 409 on an empty cart."""
    with transaction():
        require_kyb_approved(organization_id)
        items = _items(organization_id, lock=True)
        if not items:
            raise Conflict("the cart is empty")
        created = [
            reservations.open_reservation(
                industrial_organization_id=organization_id,
                campaign=item.campaign,
                ad_space=item.ad_space,
                priced=pricing.price(item.ad_space.price_cents, rate_bps),
                created_by_user_id=user_id,
            )
            for item in items
        ]
        CartItem.delete().where(CartItem.id.in_([item.id for item in items])).execute()
    return reservations.joined_reservations([r.id for r in created])
