"""Campaigns, the cart and its checkout, reservations and their review."""

from __future__ import annotations

from api.access import roles
from api.marketplace.catalog import acting_organization, list_params
from api.responses import load, send
from api.routes import Route
from backend.marketplace import campaigns, cart, reservations
from schemas.marketplace.reservations import (
    CampaignIn,
    CampaignOut,
    CartItemAnswer,
    CartItemIn,
    CartOut,
    ReservationDetailOut,
    ReservationOut,
    ReservationQuery,
    ReviewIn,
    cart_line,
    with_print_orders,
)

# Specification A: an industrial or distributor workspace is blocked until its KYB is approved, so
# every route here refuses (403, `kyb_not_approved`) before it. The services that make a
# reservation binding check again under a lock (they also serve the CLI and the seeder).
INDUSTRIAL = roles("industrial", kyb_required=True)
DISTRIBUTOR = roles("distributor", kyb_required=True)


class Campaigns:
    def on_post(self, req, resp) -> None:
        """Create a campaign; `universeIds` and `rayonIds` are stored as given (unconstrained).
        ---
        summary: Create a campaign
        tags: [campaigns]
        requestBody:
          content:
            application/json:
              schema: CampaignIn
        responses:
          201:
            description: the campaign
            content:
              application/json:
                schema: CampaignAnswerEnvelope
        """
        body = load(req, CampaignIn())
        campaign = campaigns.create_campaign(
            organization_id=acting_organization(req, "industrial"), name=body["name"], starts_at=body["startsAt"],
            ends_at=body["endsAt"], universe_ids=body["universeIds"], rayon_ids=body["rayonIds"],
            created_by_user_id=req.context.principal.user_id,
        )
        send(resp, {"campaign": CampaignOut().dump(campaign)}, status=201)

    def on_get(self, req, resp) -> None:
        """The caller's campaigns, paginated; sortBy `createdAt` (default), `name`, `startsAt`.
        ---
        summary: List my campaigns
        tags: [campaigns]
        parameters:
          - {in: query, schema: ListQuery}
        responses:
          200:
            description: a page of campaigns
            content:
              application/json:
                schema: CampaignPageEnvelope
        """
        params, _ = list_params(req)
        page = campaigns.list_campaigns(organization_id=acting_organization(req, "industrial"), params=params)
        send(resp, page.as_dict(CampaignOut().dump))


class Cart:
    def __init__(self, rate_bps: int) -> None:
        self.rate_bps = rate_bps

    def on_get(self, req, resp) -> None:
        """The cart with the Specification C breakdown per item and in total (rate from configuration).
        ---
        summary: My cart
        tags: [cart]
        responses:
          200:
            description: items and aggregates
            content:
              application/json:
                schema: CartOutEnvelope
        """
        current = cart.current_cart(organization_id=acting_organization(req, "industrial"), rate_bps=self.rate_bps)
        send(resp, CartOut().dump({"items": [cart_line(line) for line in current.lines], **current.totals.as_api()}))

    def on_post_items(self, req, resp) -> None:
        """Add an ad space for a campaign's dates; 409 when already in the cart for that campaign.
        ---
        summary: Add a cart item
        tags: [cart]
        requestBody:
          content:
            application/json:
              schema: CartItemIn
        responses:
          201:
            description: the item with its breakdown
            content:
              application/json:
                schema: CartItemAnswerEnvelope
        """
        body = load(req, CartItemIn())
        line = cart.add_cart_item(
            organization_id=acting_organization(req, "industrial"), campaign_id=body["campaignId"],
            ad_space_id=body["adSpaceId"], user_id=req.context.principal.user_id, rate_bps=self.rate_bps,
        )
        send(resp, CartItemAnswer().dump({"item": cart_line(line)}), status=201)

    def on_delete_item(self, req, resp, item_id: str) -> None:
        """Remove a cart item.
        ---
        summary: Remove a cart item
        tags: [cart]
        responses:
          200:
            description: removed
            content:
              application/json:
                schema: MarketplaceDeletedOutEnvelope
        """
        cart.remove_cart_item(organization_id=acting_organization(req, "industrial"), item_id=item_id)
        send(resp, {"id": item_id, "deleted": True})

    def on_post_checkout(self, req, resp) -> None:
        """One `pending_review` reservation per item (`principal_seller`, pricing frozen), then the cart
        is empty. 403 with `details.reason = kyb_not_approved` until KYB is approved; 409 on an empty cart.
        ---
        summary: Check out the cart
        tags: [cart]
        responses:
          201:
            description: the reservations created
            content:
              application/json:
                schema: CheckoutOutEnvelope
        """
        created = cart.checkout(
            organization_id=acting_organization(req, "industrial"), user_id=req.context.principal.user_id,
            rate_bps=self.rate_bps,
        )
        send(resp, {"reservations": ReservationOut(many=True).dump(created)}, status=201)


class Reservations:
    def on_get(self, req, resp) -> None:
        """Reservations of the caller's organization: an industrial sees its own, a distributor those of
        its stores. Filter `status`; sortBy `createdAt` (default), `startsAt`, `status`,
        `totalAmountCents`; search in ad-space, store and campaign names.
        ---
        summary: List reservations
        tags: [reservations]
        parameters:
          - {in: query, schema: ReservationQuery}
        responses:
          200:
            description: a page of reservations
            content:
              application/json:
                schema: ReservationPageEnvelope
        """
        params, query = list_params(req, ReservationQuery())
        page = reservations.list_reservations(
            organization_id=acting_organization(req, "industrial", "distributor"), params=params,
            status=query["status"],
        )
        with_print_orders(page.items)
        send(resp, page.as_dict(ReservationOut().dump))


def send_reservation(resp, reservation) -> None:
    """`{reservation}` with its active print order (API.md: `printOrder`, `batchCode`...)."""
    send(resp, {"reservation": ReservationDetailOut().dump(with_print_orders([reservation])[0])})


class Reservation:
    def __init__(self, rate_bps: int) -> None:
        self.rate_bps = rate_bps

    def on_get(self, req, resp, reservation_id: str) -> None:
        """One reservation, for its industrial, its distributor or an admin (404 for anyone else).
        ---
        summary: Get a reservation
        tags: [reservations]
        responses:
          200:
            description: the reservation
            content:
              application/json:
                schema: ReservationAnswerEnvelope
        """
        reservation = reservations.visible_reservation(
            reservation_id=reservation_id, organization_id=req.context.principal.active_organization_id,
            is_admin=req.context.principal.is_admin,
        )
        send_reservation(resp, reservation)

    def on_post_review(self, req, resp, reservation_id: str) -> None:
        """The distributor approves, rejects or counter-proposes (`priceCents` required) a
        `pending_review` reservation; 409 CONFLICT in any other status or on overlapping approved dates.
        ---
        summary: Review a reservation
        tags: [reservations]
        requestBody:
          content:
            application/json:
              schema: ReviewIn
        responses:
          200:
            description: the reservation
            content:
              application/json:
                schema: ReservationAnswerEnvelope
        """
        body = load(req, ReviewIn())
        reservation = reservations.review_reservation(
            reservation_id=reservation_id, distributor_organization_id=acting_organization(req, "distributor"),
            decision=body["status"], price_cents=body["priceCents"], note=body["note"],
        )
        send_reservation(resp, reservation)

    def on_post_accept(self, req, resp, reservation_id: str) -> None:
        """The industrial accepts a counter-proposal: `approved`, pricing re-frozen at the current rate.
        ---
        summary: Accept a counter-proposal
        tags: [reservations]
        responses:
          200:
            description: the reservation
            content:
              application/json:
                schema: ReservationAnswerEnvelope
        """
        reservation = reservations.accept_counter_proposal(
            reservation_id=reservation_id, industrial_organization_id=acting_organization(req, "industrial"),
            rate_bps=self.rate_bps,
        )
        send_reservation(resp, reservation)

    def on_post_decline(self, req, resp, reservation_id: str) -> None:
        """The industrial declines a counter-proposal: the reservation becomes `rejected`.
        ---
        summary: Decline a counter-proposal
        tags: [reservations]
        responses:
          200:
            description: the reservation
            content:
              application/json:
                schema: ReservationAnswerEnvelope
        """
        reservation = reservations.decline_counter_proposal(
            reservation_id=reservation_id, industrial_organization_id=acting_organization(req, "industrial")
        )
        send_reservation(resp, reservation)


def routes(deps) -> list[Route]:
    rate = deps.config.platform_commission_rate_bps
    shopping, reservation = Cart(rate), Reservation(rate)
    return [
        Route("/api/campaigns", Campaigns(), INDUSTRIAL),
        Route("/api/campaigns/cart", shopping, INDUSTRIAL),
        Route("/api/campaigns/cart/items", shopping, INDUSTRIAL, suffix="items"),
        Route("/api/campaigns/cart/items/{item_id}", shopping, INDUSTRIAL, suffix="item"),
        Route("/api/campaigns/cart/checkout", shopping, INDUSTRIAL, suffix="checkout"),
        Route("/api/reservations", Reservations(), roles("industrial", "distributor", kyb_required=True)),
        Route("/api/reservations/{reservation_id}", reservation,
              roles("industrial", "distributor", "admin", kyb_required=True)),
        Route("/api/distributor/reservations/{reservation_id}/review", reservation, DISTRIBUTOR, suffix="review"),
        Route("/api/reservations/{reservation_id}/counter-proposal/accept", reservation, INDUSTRIAL,
              suffix="accept"),
        Route("/api/reservations/{reservation_id}/counter-proposal/decline", reservation, INDUSTRIAL,
              suffix="decline"),
    ]
