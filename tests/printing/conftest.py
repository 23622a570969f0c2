"""Printing fixtures: organizations, a reservation with its furniture zones, print orders inserted
directly (the deposit flows that create them come in a later phase)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from backend.identity.models import Organization, User
from backend.marketplace.models import (
    AdSpace,
    Campaign,
    FurnitureType,
    FurnitureTypeVersion,
    FurnitureZone,
    Reservation,
    Store,
    Universe,
)
from backend.printing.models import PrintOrder, PrintOrderLine
from backend.printing.orders import allocate_order_codes
from backend.printing.plans import Recipient
from storage.local import LocalStorage
from tests.factories import add_member, make_organization, make_user, signed_in
from tests.printing.helpers import upload

STARTS, ENDS = datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 31, tzinfo=UTC)


@dataclass
class Setting:
    """One industrial, one printer, a two-zone furniture type and helpers around them."""

    industrial: Organization
    printer: Organization
    printer_user: User
    industrial_user: User
    zones: list[FurnitureZone]
    version: FurnitureTypeVersion
    store: Store
    universe: Universe
    campaign: Campaign
    distributor: Organization

    def reservation(self) -> Reservation:
        """An approved reservation, each on an ad space of its own (double booking is excluded)."""
        ad_space = AdSpace.create(store=self.store, name="TG", promo_furniture_type=self.version.furniture_type,
                                  placement_universe=self.universe, price_cents=10_000)
        return Reservation.create(
            industrial_organization_id=self.industrial.id,
            distributor_organization_id=self.distributor.id,
            campaign=self.campaign,
            ad_space=ad_space,
            furniture_type_version=self.version,
            starts_at=STARTS,
            ends_at=ENDS,
            status="approved",
            base_amount_cents=10_000,
            commission_amount_cents=2_000,
            total_amount_cents=12_000,
            commission_rate_bps=2000,
        )


@pytest.fixture
def setting() -> Setting:
    industrial = make_organization("industrial", kyb_status="approved")
    distributor = make_organization("distributor", kyb_status="approved")
    printer = make_organization("printer")
    industrial_user, printer_user = make_user(), make_user()
    add_member(industrial_user, industrial, "member")
    add_member(printer_user, printer, "member")
    furniture_type = FurnitureType.create()
    version = FurnitureTypeVersion.create(
        furniture_type=furniture_type, version=1, name="Tête de gondole", printer_organization_id=printer.id
    )
    zones = [
        FurnitureZone.create(furniture_type_version=version, position=0, code="FRONTON", label="Fronton",
                             face_quantity=2, printable=True, width_mm=1000, height_mm=300),
        FurnitureZone.create(furniture_type_version=version, position=1, code="JOUE", label="Joue",
                             face_quantity=4, printable=True, width_mm=400, height_mm=1200),
    ]
    universe = Universe.create(code="UNIV_EPICERIE", label="Épicerie", normalized_label="epicerie", sort_order=1)
    store = Store.create(organization_id=distributor.id, name="Magasin Lyon", street="1 rue A", postal_code="69001",
                         city="Lyon", country="FR")
    campaign = Campaign.create(organization_id=industrial.id, name="Printemps", starts_at=STARTS, ends_at=ENDS)
    return Setting(
        industrial=industrial,
        printer=printer,
        printer_user=printer_user,
        industrial_user=industrial_user,
        zones=zones,
        version=version,
        store=store,
        universe=universe,
        campaign=campaign,
        distributor=distributor,
    )


@pytest.fixture
def make_print_order(setting):
    """`make_print_order(status="pending", lines=[{zone, quantity, asset_id, face_index}])`."""

    def make(status: str = "pending", lines: list[dict] | None = None, printer_organization_id: str | None = None):
        order = PrintOrder.create(
            code=allocate_order_codes(1)[0],
            reservation_id=setting.reservation().id,
            printer_organization_id=printer_organization_id or setting.printer.id,
            industrial_organization_id=setting.industrial.id,
            status=status,
            **Recipient.of_store(setting.store).columns(),
        )
        for position, line in enumerate(lines or [{"zone": setting.zones[0], "quantity": 2}]):
            PrintOrderLine.create(
                order=order,
                position=position,
                zone_id=line["zone"].id,
                face_index=line.get("face_index"),
                quantity=line["quantity"],
                asset_id=line.get("asset_id"),
                qualifiers=line.get("qualifiers", []),
            )
        return order

    return make


@pytest.fixture
def storage(tmp_path):
    return LocalStorage(tmp_path / "storage")


@pytest.fixture
def seeded_templates(config):
    """Version 1 of every document template, as `vitrine migrate` seeds them (order forms)."""
    from backend.documents.seeding import seed_default_versions
    from storage import build_storage

    return seed_default_versions(build_storage(config))


@pytest.fixture
def member(setting):
    return signed_in(setting.industrial_user, setting.industrial)


@pytest.fixture
def printer(setting):
    return signed_in(setting.printer_user, setting.printer)


@pytest.fixture
def group(client, member, setting):
    """`group(n)`: n approved reservations of the campaign and the batch draft, with one visual
    attached to each zone as a whole (same visual)."""

    def make(n: int = 4, *, visual: bool = True):
        reservations = [setting.reservation() for _ in range(n)]
        resp = client.simulate_post("/api/print-batches", headers=member, json={
            "campaignId": setting.campaign.id, "promoFurnitureTypeId": setting.version.furniture_type_id})
        assert resp.status_code in (200, 201), resp.json
        batch_id = resp.json["data"]["batch"]["id"]
        if visual:
            asset = upload(client, member)
            for zone in setting.zones:
                attach = client.simulate_post(f"/api/print-batches/{batch_id}/upload/preflight-from-asset",
                                              headers=member, json={"zoneId": zone.id, "faceIndex": None,
                                                                    "assetId": asset})
                assert attach.status_code == 201, attach.json
        return batch_id, [r.id for r in reservations]

    return make


@pytest.fixture
def sent_batch(client, member, group):
    """`sent_batch(n)`: a confirmed batch of n pending orders; its code."""

    def make(n: int) -> str:
        batch_id, ids = group(n)
        answer = client.simulate_post(f"/api/print-batches/{batch_id}/confirm", headers=member,
                                      json={"reservationIds": ids, "delivery": {"target": "store"}})
        return answer.json["data"]["batch"]["code"]

    return make
