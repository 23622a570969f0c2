"""Campaigns, the cart and its checkout, reservations and their review.

Specification A: an industrial or distributor workspace is blocked until its KYB is approved, so
every route here refuses (403, `kyb_not_approved`) before it. The services that make a reservation
binding check again under a lock (they also serve the CLI and the seeder).
"""

from __future__ import annotations

from api.access import BUSINESS, DISTRIBUTOR, INDUSTRIAL, Route, roles
from api.operations import operation
from api.requests import acting_organization
from backend.listing import ListParams
from backend.marketplace import campaigns, cart, reservations
from backend.printing.impressions import with_print_orders
from schemas.common import page_of
from schemas.marketplace.catalog import MarketplaceDeletedOut
from schemas.marketplace.reservations import (
    CampaignAnswer,
    CampaignIn,
    CampaignListQuery,
    CampaignOut,
    CartItemAnswer,
    CartItemIn,
    CartOut,
    CheckoutOut,
    ReservationAnswer,
    ReservationOut,
    ReservationQuery,
    ReviewIn,
    cart_line,
)


class Campaigns:
    @operation("Create a campaign",
               description="`universeIds` and `rayonIds` are stored as given (unconstrained).",
               tags=("campaigns",), body=CampaignIn, answer=CampaignAnswer, status=201)
    def on_post(self, req, resp, body: dict) -> dict:
        campaign = campaigns.create_campaign(
            organization_id=acting_organization(req, "industrial"), name=body["name"], starts_at=body["startsAt"],
            ends_at=body["endsAt"], universe_ids=body["universeIds"], rayon_ids=body["rayonIds"],
            created_by_user_id=req.context.principal.user_id,
        )
        return {"campaign": campaign}

    @operation("List my campaigns",
               description="The caller's campaigns, paginated.",
               tags=("campaigns",), query=CampaignListQuery, answer=page_of(CampaignOut))
    def on_get(self, req, resp, query: dict):
        return campaigns.list_campaigns(organization_id=acting_organization(req, "industrial"),
                                        params=ListParams.from_query(query))


class Cart:
    def __init__(self, rate_bps: int) -> None:
        self.rate_bps = rate_bps

    @operation("My cart",
               description="The cart with the Specification C breakdown per item and in total (rate from "
                           "configuration).",
               tags=("cart",), answer=CartOut, answer_description="items and aggregates")
    def on_get(self, req, resp) -> dict:
        current = cart.current_cart(organization_id=acting_organization(req, "industrial"), rate_bps=self.rate_bps)
        return {"items": [cart_line(line) for line in current.lines], **current.totals.as_api()}

    @operation("Add a cart item",
               description="Add an ad space for a campaign's dates; 409 when already in the cart for that campaign.",
               tags=("cart",), body=CartItemIn, answer=CartItemAnswer, status=201,
               answer_description="the item with its breakdown")
    def on_post_items(self, req, resp, body: dict) -> dict:
        line = cart.add_cart_item(
            organization_id=acting_organization(req, "industrial"), campaign_id=body["campaignId"],
            ad_space_id=body["adSpaceId"], user_id=req.context.principal.user_id, rate_bps=self.rate_bps,
        )
        return {"item": cart_line(line)}

    @operation("Remove a cart item", tags=("cart",), answer=MarketplaceDeletedOut)
    def on_delete_item(self, req, resp, item_id: str) -> dict:
        cart.remove_cart_item(organization_id=acting_organization(req, "industrial"), item_id=item_id)
        return {"id": item_id, "deleted": True}

    @operation("Check out the cart",
               description="One `pending_review` reservation per item (`principal_seller`, pricing frozen), then "
                           "the cart is empty. 403 with `details.reason = kyb_not_approved` until KYB is approved; "
                           "409 on an empty cart.",
               tags=("cart",), answer=CheckoutOut, status=201, answer_description="the reservations created")
    def on_post_checkout(self, req, resp) -> dict:
        created = cart.checkout(
            organization_id=acting_organization(req, "industrial"), user_id=req.context.principal.user_id,
            rate_bps=self.rate_bps,
        )
        return {"reservations": created}


class Reservations:
    @operation("List reservations",
               description="Reservations of the caller's organization: an industrial sees its own, a distributor "
                           "those of its stores. Filter `status`; sortBy `createdAt` (default), `startsAt`, "
                           "`status`, `totalAmountCents`; search in ad-space, store and campaign names.",
               tags=("reservations",), query=ReservationQuery, answer=page_of(ReservationOut))
    def on_get(self, req, resp, query: dict):
        page = reservations.list_reservations(
            organization_id=acting_organization(req, "industrial", "distributor"),
            params=ListParams.from_query(query), status=query["status"],
        )
        with_print_orders(page.items)
        return page


def reservation_answer(reservation) -> dict:
    """`{reservation}` with its active print order (API.md: `printOrder`, `batchCode`...)."""
    return {"reservation": with_print_orders([reservation])[0]}


class Reservation:
    def __init__(self, rate_bps: int) -> None:
        self.rate_bps = rate_bps

    @operation("Get a reservation",
               description="One reservation, for its industrial, its distributor or an admin (404 for anyone else).",
               tags=("reservations",), answer=ReservationAnswer)
    def on_get(self, req, resp, reservation_id: str) -> dict:
        return reservation_answer(reservations.visible_reservation(
            reservation_id=reservation_id, organization_id=req.context.principal.active_organization_id,
            is_admin=req.context.principal.is_admin,
        ))

    @operation("Review a reservation",
               description="The distributor approves, rejects or counter-proposes (`priceCents` required) a "
                           "`pending_review` reservation; 409 CONFLICT in any other status or on overlapping "
                           "approved dates.",
               tags=("reservations",), body=ReviewIn, answer=ReservationAnswer)
    def on_post_review(self, req, resp, reservation_id: str, body: dict) -> dict:
        return reservation_answer(reservations.review_reservation(
            reservation_id=reservation_id, distributor_organization_id=acting_organization(req, "distributor"),
            decision=body["status"], price_cents=body["priceCents"], note=body["note"],
        ))

    @operation("Accept a counter-proposal",
               description="The industrial accepts a counter-proposal: `approved`, pricing re-frozen at the current "
                           "rate.",
               tags=("reservations",), answer=ReservationAnswer)
    def on_post_accept(self, req, resp, reservation_id: str) -> dict:
        return reservation_answer(reservations.accept_counter_proposal(
            reservation_id=reservation_id, industrial_organization_id=acting_organization(req, "industrial"),
            rate_bps=self.rate_bps,
        ))

    @operation("Decline a counter-proposal",
               description="The industrial declines a counter-proposal: the reservation becomes `rejected`.",
               tags=("reservations",), answer=ReservationAnswer)
    def on_post_decline(self, req, resp, reservation_id: str) -> dict:
        return reservation_answer(reservations.decline_counter_proposal(
            reservation_id=reservation_id, industrial_organization_id=acting_organization(req, "industrial")
        ))


def routes(deps) -> list[Route]:
    rate = deps.config.platform_commission_rate_bps
    shopping, reservation = Cart(rate), Reservation(rate)
    return [
        Route("/api/campaigns", Campaigns(), INDUSTRIAL),
        Route("/api/campaigns/cart", shopping, INDUSTRIAL),
        Route("/api/campaigns/cart/items", shopping, INDUSTRIAL, suffix="items"),
        Route("/api/campaigns/cart/items/{item_id}", shopping, INDUSTRIAL, suffix="item"),
        Route("/api/campaigns/cart/checkout", shopping, INDUSTRIAL, suffix="checkout"),
        Route("/api/reservations", Reservations(), BUSINESS),
        Route("/api/reservations/{reservation_id}", reservation,
              roles("industrial", "distributor", "admin", kyb_required=True)),
        Route("/api/distributor/reservations/{reservation_id}/review", reservation, DISTRIBUTOR, suffix="review"),
        Route("/api/reservations/{reservation_id}/counter-proposal/accept", reservation, INDUSTRIAL,
              suffix="accept"),
        Route("/api/reservations/{reservation_id}/counter-proposal/decline", reservation, INDUSTRIAL,
              suffix="decline"),
    ]
