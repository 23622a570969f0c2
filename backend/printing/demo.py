"""Printing demo data of `vitrine seed-demo`: a winter campaign of the demo industrial over eight
stores, approved by the demo distributor, its deposits and the demo printer's orders in every
status (to deposit, in stock, in review, pending, sent, in production, produced, delivered with
tracking). Runs after the marketplace seeder, through the same services as the API; idempotent
(nothing is done once the demo printer has an order)."""

from __future__ import annotations

import io
import struct
import zlib
from datetime import UTC, datetime

from backend.identity.models import User
from backend.marketplace import campaigns, cart, reservations
from backend.marketplace.demo import DISTRIBUTOR, INDUSTRIAL
from backend.marketplace.models import AdSpace, Store
from backend.marketplace.reservations import Review
from backend.printing import assets, deposits, orders
from backend.printing.allocation import Slot
from backend.printing.configuration import configuration_of
from backend.printing.delivery import update_delivery
from backend.printing.models import PrintOrder
from backend.runtime import current_runtime

DEMO_PRINTER = "printer:414217190"
CAMPAIGN = "Raclette d'hiver"
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


def seed_demo_printing() -> str:
    if PrintOrder.select().where(PrintOrder.printer_organization_id == DEMO_PRINTER).exists():
        return "demo print orders already present"
    storage, rate = current_runtime().storage, current_runtime().config.platform_commission_rate_bps
    industrial_user = _user_id("industriel@vitrine.example")
    campaign = campaigns.create_campaign(
        organization_id=INDUSTRIAL, name=CAMPAIGN, starts_at=datetime(2027, 1, 11, tzinfo=UTC),
        ends_at=datetime(2027, 2, 7, tzinfo=UTC), universe_ids=[], rayon_ids=[], created_by_user_id=industrial_user,
    )
    spaces = (AdSpace.select().join(Store).where(Store.organization_id == DISTRIBUTOR)
              .order_by(Store.name, AdSpace.name).limit(len(STEPS) + 4))
    for space in spaces:
        cart.add_cart_item(organization_id=INDUSTRIAL, campaign_id=campaign.id, ad_space_id=space.id,
                           user_id=industrial_user, rate_bps=rate)
    booked = cart.checkout(organization_id=INDUSTRIAL, user_id=industrial_user, rate_bps=rate)
    for reservation in booked:
        reservations.review_reservation(reservation_id=reservation.id, distributor_organization_id=DISTRIBUTOR,
                                        decision=Review.APPROVED)
        deposits.open_deposit(reservation.id)
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
    return (f"campaign {CAMPAIGN!r}: {len(booked)} approved reservations (1 to deposit, 1 in stock, 1 in review), "
            f"{len(released)} orders released to {DEMO_PRINTER} (pending to delivered)")


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
