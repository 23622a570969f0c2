"""Printing demo data of `vitrine seed-demo`, through the same services as the API:

- "Raclette d'hiver": the demo industrial's campaign over six stores, approved by the demo
  distributor, with deposits and the demo printer's orders in every state (to deposit, in stock,
  in review, pending, sent, in production, produced, delivered with tracking);
- "Fête des fromages": one reservation per store (20) on the same furniture type, approved and
  still to deposit, for a print batch built by hand.

Runs after the marketplace seeder; idempotent (nothing is done once the demo printer has an order).
"""

from __future__ import annotations

import io
import struct
import zlib
from datetime import UTC, datetime

from backend.identity.models import User
from backend.marketplace import campaigns, cart, reservations
from backend.marketplace.demo import DISTRIBUTOR, INDUSTRIAL
from backend.marketplace.models import AdSpace, FurnitureTypeVersion, Store
from backend.marketplace.reservations import Review
from backend.printing import assets, deposits, orders
from backend.printing.allocation import Slot
from backend.printing.configuration import configuration_of
from backend.printing.delivery import update_delivery
from backend.printing.models import PrintOrder
from storage import Storage

DEMO_PRINTER = "printer:414217190"
CAMPAIGN = "Raclette d'hiver"
BATCH_CAMPAIGN = "Fête des fromages"
BATCH_FURNITURE = "Tête de gondole"
STEPS = ("sent", "in_production", "produced", "delivered")


def demo_png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A plain-coloured PNG (a stand-in for a real visual)."""
    row = b"\x00" + bytes(rgb) * width

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(row * height))
            + chunk(b"IEND", b""))


def _user_id(email: str) -> str:
    return User.get(User.email == email).id


def seed_demo_printing(*, storage: Storage, rate: int) -> str:
    """Demo deposits and print orders in every status; `rate` is the platform's commission rate."""
    if PrintOrder.select().where(PrintOrder.printer_organization_id == DEMO_PRINTER).exists():
        return "demo print orders already present"
    industrial_user = _user_id("industriel@vitrine.example")
    booked = _approved_campaign(CAMPAIGN, datetime(2027, 1, 11, tzinfo=UTC), datetime(2027, 2, 7, tzinfo=UTC),
                                industrial_user, rate, limit=len(STEPS) + 4)
    visual = assets.upload_asset(
        storage=storage, organization_id=INDUSTRIAL, user_id=industrial_user, original_name="Raclette hiver.png",
        stream=io.BytesIO(demo_png(600, 200, (196, 74, 36))), max_bytes=10 * 1024 * 1024,
    )
    _to_deposit, in_stock, in_review, *released = booked
    deposits.declare_print_support(reservation_id=in_stock.id, organization_id=INDUSTRIAL, in_stock=True,
                                   default_printer_organization_id=DEMO_PRINTER)
    _deposit(in_review, visual.id, per_face=False)
    admin, printer_user = _user_id("admin@vitrine.example"), _user_id("imprimeur@vitrine.example")
    for n, reservation in enumerate(released):
        code = _deposit(reservation, visual.id, per_face=n % 2 == 1)
        orders.release_order(order_code=code, actor_user_id=admin)
        printer = PrintOrder.get(PrintOrder.code == code).printer_organization_id
        for step in STEPS[: n % (len(STEPS) + 1)]:
            orders.change_status(order_code=code, printer_organization_id=printer, next_status=step,
                                 actor_user_id=printer_user)
        if n % (len(STEPS) + 1) == len(STEPS):
            update_delivery(order_code=code, printer_organization_id=printer, notify_industrial=False,
                            changes={"carrier": "Geodis", "trackingNumber": f"GX{n:06d}",
                                     "trackingUrl": f"https://suivi.example/GX{n:06d}"})
    batch_ready = _approved_campaign(BATCH_CAMPAIGN, datetime(2027, 4, 5, tzinfo=UTC),
                                     datetime(2027, 4, 30, tzinfo=UTC), industrial_user, rate,
                                     furniture=BATCH_FURNITURE)
    return (f"campaign {CAMPAIGN!r}: {len(booked)} approved reservations (1 to deposit, 1 in stock, 1 in review), "
            f"{len(released)} orders released to {DEMO_PRINTER} (pending to delivered); campaign {BATCH_CAMPAIGN!r}: "
            f"{len(batch_ready)} reservations to deposit as a batch")


def _approved_campaign(name: str, starts_at: datetime, ends_at: datetime, user_id: str, rate: int, *,
                       limit: int | None = None, furniture: str | None = None) -> list:
    """A campaign of the demo industrial over the demo distributor's ad spaces (those of one
    furniture type when named), checked out and approved, each deposit opened."""
    campaign = campaigns.create_campaign(organization_id=INDUSTRIAL, name=name, starts_at=starts_at,
                                         ends_at=ends_at, universe_ids=[], rayon_ids=[], created_by_user_id=user_id)
    spaces = AdSpace.select().join(Store).where(Store.organization_id == DISTRIBUTOR)
    if furniture:
        spaces = spaces.switch(AdSpace).join(FurnitureTypeVersion, on=(
            AdSpace.promo_furniture_type == FurnitureTypeVersion.furniture_type)).where(
            FurnitureTypeVersion.name == furniture, FurnitureTypeVersion.version == 1)
    for space in spaces.order_by(Store.name, AdSpace.name).limit(limit):
        cart.add_cart_item(organization_id=INDUSTRIAL, campaign_id=campaign.id, ad_space_id=space.id,
                           user_id=user_id, rate_bps=rate)
    booked = cart.checkout(organization_id=INDUSTRIAL, user_id=user_id, rate_bps=rate)
    for reservation in booked:
        reservations.review_reservation(reservation_id=reservation.id, distributor_organization_id=DISTRIBUTOR,
                                        decision=Review.APPROVED)
        deposits.open_deposit(reservation.id)
    return booked


def _deposit(reservation, asset_id: str, *, per_face: bool) -> str:
    """Attach the visual to every printable slot and confirm: the draft order's code."""
    configuration = configuration_of(reservation.furniture_type_version_id)
    slots = [Slot(zone.id, face) for zone in configuration.printable_zones
             for face in (range(zone.face_quantity) if per_face else [None])]
    for slot in slots:
        deposits.attach_preflight(reservation_id=reservation.id, organization_id=INDUSTRIAL, zone_id=slot.zone_id,
                                  face_index=slot.face_index, asset_id=asset_id, user_id=None)
    state = deposits.confirm_deposit(reservation_id=reservation.id, organization_id=INDUSTRIAL,
                                     confirmed_files=slots, reuse=[], default_printer_organization_id=DEMO_PRINTER)
    return state.order.order.code
