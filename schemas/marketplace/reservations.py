"""Campaign, cart and reservation schemas (API.md "Marketplace core", Specification C breakdown)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend.marketplace.campaigns import CAMPAIGN_SORTS
from backend.marketplace.models import ReservationStatus
from backend.marketplace.pricing import resolve_billing_model
from backend.marketplace.reservations import RESERVATION_SORTS, Review
from backend.printing.impressions import shown_impression_status
from backend.printing.models import ImpressionStatus
from backend.printing.status import PrintOrderStatus
from schemas.common import ListQuery, UtcDateTime, enum_of, sort_by
from schemas.marketplace.catalog import NAME, AdSpaceOut

ZONE_IDS = fields.List(fields.String(validate=validate.Length(min=1, max=64)), load_default=list,
                       validate=validate.Length(max=200))


class CampaignIn(Schema):
    name = fields.String(required=True, validate=NAME)
    startsAt = UtcDateTime(required=True)
    endsAt = UtcDateTime(required=True)
    universeIds = ZONE_IDS
    rayonIds = ZONE_IDS


class CampaignOut(Schema):
    id = fields.String(required=True)
    organizationId = fields.String(attribute="organization_id", required=True)
    name = fields.String(required=True)
    startsAt = UtcDateTime(attribute="starts_at", required=True)
    endsAt = UtcDateTime(attribute="ends_at", required=True)
    universeIds = fields.List(fields.String(), attribute="universe_ids", required=True)
    rayonIds = fields.List(fields.String(), attribute="rayon_ids", required=True)
    createdAt = UtcDateTime(attribute="created_at")


class CampaignAnswer(Schema):
    campaign = fields.Nested(CampaignOut, required=True)


class PricingOut(Schema):
    """Specification C names; `reservationTotalCents` keeps its older meaning (store base)."""

    netDistributorAmountCents = fields.Integer(required=True)
    platformCommissionAmountCents = fields.Integer(required=True)
    industrialTotalPayableCents = fields.Integer(required=True)
    reservationTotalCents = fields.Integer(required=True)
    commissionRateBps = fields.Integer(required=True)


class CartItemIn(Schema):
    campaignId = fields.String(required=True, validate=validate.Length(min=1, max=36))
    adSpaceId = fields.String(required=True, validate=validate.Length(min=1, max=36))


class CartItemOut(PricingOut):
    id = fields.String(required=True)
    campaignId = fields.String(required=True)
    campaignName = fields.String(required=True)
    startsAt = UtcDateTime(required=True)
    endsAt = UtcDateTime(required=True)
    adSpace = fields.Nested(AdSpaceOut, required=True)
    createdAt = UtcDateTime()


class CartItemAnswer(Schema):
    item = fields.Nested(CartItemOut, required=True)


class CartOut(Schema):
    items = fields.List(fields.Nested(CartItemOut), required=True)
    totalNetDistributorCents = fields.Integer(required=True)
    totalPlatformCommissionCents = fields.Integer(required=True)
    totalIndustrialPayableCents = fields.Integer(required=True)
    commissionRateBps = fields.Integer(required=True)


def cart_line(line) -> dict:
    """The CartItemOut fields of a cart line (item with campaign, ad space and store loaded, and
    its pricing), ready to dump."""
    item = line.item
    return {
        "id": item.id,
        "campaignId": item.campaign_id,
        "campaignName": item.campaign.name,
        "startsAt": item.campaign.starts_at,
        "endsAt": item.campaign.ends_at,
        "adSpace": item.ad_space,
        "createdAt": item.created_at,
        **line.pricing.as_api(),
    }


class ReviewIn(Schema):
    status = fields.Enum(Review, by_value=True, required=True)
    priceCents = fields.Integer(load_default=None, allow_none=True, strict=True,
                                validate=validate.Range(min=0, max=1_000_000_000),
                                metadata={"description": "the counter-proposed store price (counter_proposal)"})
    note = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=2000))


class CampaignListQuery(ListQuery):
    sortBy = sort_by(CAMPAIGN_SORTS, "createdAt")


class ReservationQuery(ListQuery):
    sortBy = sort_by(RESERVATION_SORTS, "createdAt")
    status = fields.String(load_default=None, validate=validate.OneOf([s.value for s in ReservationStatus]))


def _print_order(reservation, name: str):
    """An attribute of the reservation's active print order, set by `backend.printing.impressions.with_print_orders`."""
    order = getattr(reservation, "print_order", None)
    return getattr(order, name) if order else None


class ReservationOut(Schema):
    """A reservation with its frozen pricing under the Specification C names."""

    id = fields.String(required=True)
    status = fields.String(required=True, metadata={"enum": [s.value for s in ReservationStatus]})
    billingModel = fields.Function(lambda r: resolve_billing_model(r.billing_model).value, required=True)
    industrialOrganizationId = fields.String(attribute="industrial_organization_id", required=True)
    distributorOrganizationId = fields.String(attribute="distributor_organization_id", required=True)
    campaignId = fields.String(attribute="campaign_id", required=True)
    campaignName = fields.String(attribute="campaign.name", required=True)
    adSpace = fields.Nested(AdSpaceOut, attribute="ad_space", required=True)
    promoFurnitureTypeId = fields.String(attribute="ad_space.promo_furniture_type_id", required=True)
    furnitureTypeVersionId = fields.String(attribute="furniture_type_version_id", required=True,
                                           metadata={"description": "the furniture configuration frozen at checkout"})
    startsAt = UtcDateTime(attribute="starts_at", required=True)
    endsAt = UtcDateTime(attribute="ends_at", required=True)
    netDistributorAmountCents = fields.Integer(attribute="base_amount_cents", required=True)
    platformCommissionAmountCents = fields.Integer(attribute="commission_amount_cents", required=True)
    industrialTotalPayableCents = fields.Integer(attribute="total_amount_cents", required=True)
    reservationTotalCents = fields.Function(lambda r: r.base_amount_cents, required=True,
                                            metadata={"type": "integer", "description": "the store base"})
    commissionRateBps = fields.Integer(attribute="commission_rate_bps", required=True)
    counterProposalPriceCents = fields.Integer(attribute="counter_price_cents", allow_none=True)
    reviewNote = fields.String(attribute="review_note", allow_none=True)
    impressionStatus = fields.Function(
        lambda r: shown_impression_status(r.impression_status, r.status), allow_none=True,
        metadata={"type": "string", "description": "Specification B deposit status; null until approved",
                  **enum_of(ImpressionStatus)})
    batchCode = fields.Function(lambda r: _print_order(r, "batch_code"), allow_none=True, metadata={
        "type": "string", "description": "batch of the latest order that is not cancelled (Specification B)"})
    printOrderStatus = fields.Function(lambda r: _print_order(r, "status"), allow_none=True, metadata={
        "type": "string", "description": "status of the latest order that is not cancelled (Specification B)",
        **enum_of(PrintOrderStatus)})
    createdAt = UtcDateTime(attribute="created_at")
    updatedAt = UtcDateTime(attribute="updated_at")
    approvedAt = UtcDateTime(attribute="approved_at", allow_none=True)


class PrintOrderRefOut(Schema):
    code = fields.String(required=True)
    status = fields.String(required=True, metadata=enum_of(PrintOrderStatus))


class ReservationDetailOut(ReservationOut):
    printOrder = fields.Nested(PrintOrderRefOut, attribute="print_order", allow_none=True, metadata={
        "description": "the latest print order that is not cancelled (drafts included), or null"})


class ReservationAnswer(Schema):
    reservation = fields.Nested(ReservationDetailOut, required=True)


class CheckoutOut(Schema):
    reservations = fields.List(fields.Nested(ReservationOut), required=True)
