"""Bench data of the batch and growth scenarios: organizations, a printer user's session, a
furniture type, stores, ad spaces and approved reservations inserted in bulk, and visuals of a
chosen size; `Reader`, a file over chunks, for streaming rows into COPY."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from backend.identity.models import Membership, Organization, User
from backend.identity.sessions import open_session
from backend.marketplace import furniture, store_zones
from backend.marketplace.furniture import ZoneSpec
from backend.marketplace.models import AdSpace, Campaign, FurnitureTypeVersion, FurnitureZone, Reservation, Store
from backend.model import new_id
from backend.printing.files import PRINT_ASSETS_CONTEXT
from backend.printing.models import PrintAsset

INDUSTRIAL, DISTRIBUTOR, PRINTER = "industrial:552100554", "distributor:385347927", "printer:414217190"
CHUNK = 1024 * 1024
# A furniture type of two printable zones and one that is not, as a printer's catalogue holds.
GROWTH_ZONES = (ZoneSpec("FRONTON", "Fronton", 2, True, 1000, 300), ZoneSpec("JOUE", "Joue", 2, True, 400, 1200),
                ZoneSpec("SOCLE", "Socle", 1, False, 1000, 150))


@dataclass(frozen=True)
class World:
    printer_token: str
    industrial_token: str
    version_id: str
    furniture_type_id: str
    zones: list  # FurnitureZone rows of the version
    campaign_id: str
    store_ids: list[str]


def build_world(*, stores: int, zones) -> World:
    """Organizations (KYB approved), users with sessions, a furniture type with `zones`, a campaign
    and `stores` stores of the distributor."""

    for org_id, legal_name in ((INDUSTRIAL, "Bench Industrie"), (DISTRIBUTOR, "Bench Distribution"),
                               (PRINTER, "Bench Imprimerie")):
        actor_type, siren = org_id.split(":")
        Organization.create(id=org_id, actor_type=actor_type, siren=siren, legal_name=legal_name,
                            kyb_status="approved" if actor_type != "printer" else None)
    tokens = {}
    for org_id, role in ((PRINTER, "printer"), (INDUSTRIAL, "industrial")):
        user = User.create(email=f"bench-{role}@example.com", name=f"Bench {role}", roles=[role])
        Membership.create(user=user.id, organization=org_id, role="manager")
        tokens[role] = open_session(user, ttl_days=1, active_organization_id=org_id)
    version = furniture.create_furniture_type(name="Gondole bench", zones=zones, printer_organization_id=PRINTER)
    campaign = Campaign.create(organization_id=INDUSTRIAL, name="Campagne bench",
                               starts_at=datetime(2027, 1, 4, tzinfo=UTC), ends_at=datetime(2027, 1, 31, tzinfo=UTC))
    store_rows = [{"id": new_id(), "organization_id": DISTRIBUTOR, "name": f"Magasin {n:04d}",
                   "street": f"{n} rue du Commerce", "postal_code": f"{(n % 95) + 1:02d}000",
                   "city": f"Ville {n % 50}", "country": "FR"} for n in range(stores)]
    for start in range(0, len(store_rows), 1_000):
        Store.insert_many(store_rows[start:start + 1_000]).execute()
    zone_rows = list(FurnitureZone.select().where(FurnitureZone.furniture_type_version == version.id)
                     .order_by(FurnitureZone.position))
    return World(tokens["printer"], tokens["industrial"], version.id, version.furniture_type_id, zone_rows,
                 campaign.id, [row["id"] for row in store_rows])


def approved_reservations(world: World, count: int, *, impression_status: str | None = "to_deposit") -> list[str]:
    """`count` approved reservations of the campaign, one ad space each, spread over the stores."""

    universe = store_zones.create_universe(label=f"Univers bench {new_id()[:8]}")
    version = FurnitureTypeVersion.get_by_id(world.version_id)
    campaign = Campaign.get_by_id(world.campaign_id)
    began = datetime(2026, 11, 1, tzinfo=UTC)
    spaces, reservations = [], []
    for n in range(count):
        space_id, reservation_id = new_id(), new_id()
        spaces.append({"id": space_id, "store_id": world.store_ids[n % len(world.store_ids)],
                       "name": f"Emplacement {n:05d}", "promo_furniture_type_id": version.furniture_type_id,
                       "placement_universe_id": universe.id, "price_cents": 10_000})
        reservations.append({
            "id": reservation_id, "industrial_organization_id": INDUSTRIAL,
            "distributor_organization_id": DISTRIBUTOR, "campaign_id": campaign.id, "ad_space_id": space_id,
            "furniture_type_version_id": version.id, "starts_at": campaign.starts_at, "ends_at": campaign.ends_at,
            "status": "approved", "billing_model": "principal_seller", "base_amount_cents": 10_000,
            "commission_amount_cents": 2_000, "total_amount_cents": 12_000, "commission_rate_bps": 2000,
            "impression_status": impression_status, "created_at": began + timedelta(seconds=n),
            "updated_at": began + timedelta(seconds=n), "approved_at": began,
        })
    for start in range(0, count, 1_000):
        AdSpace.insert_many(spaces[start:start + 1_000]).execute()
        Reservation.insert_many(reservations[start:start + 1_000]).execute()
    return [row["id"] for row in reservations]


def store_visuals(storage, count: int, size: int, *, organization_id: str = INDUSTRIAL) -> list:
    """`count` PDF-signed visuals of `size` bytes each in the library (written chunk by chunk)."""

    rows = []
    for n in range(count):
        asset_id = new_id()
        key = f"bench/{asset_id}"
        block = (b"%PDF-1.7\n" + bytes([n % 251]) * (CHUNK - 9))

        def chunks(total=size, block=block):
            left = total
            while left > 0:
                yield block[:min(left, CHUNK)]
                left -= CHUNK

        stored = storage.put_stream(PRINT_ASSETS_CONTEXT, key, Reader(chunks()), "application/pdf", max_bytes=size)
        rows.append(PrintAsset.create(id=asset_id, organization_id=organization_id, original_name=f"Visuel {n}.pdf",
                                      technical_name=f"visuel-{n % 10}.pdf", content_type="application/pdf",
                                      size_bytes=size, sha256=stored.sha256, crc32=stored.crc32,
                                      storage_key=key))
    return rows


class Reader:
    """A file-like `read(n)` over an iterator of chunks."""

    def __init__(self, chunks) -> None:
        self.chunks, self.buffer = chunks, b""

    def read(self, n: int = -1) -> bytes:
        while n < 0 or len(self.buffer) < n:
            try:
                self.buffer += next(self.chunks)
            except StopIteration:
                break
        if n < 0:
            data, self.buffer = self.buffer, b""
        else:
            data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

