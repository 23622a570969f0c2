"""Preflights: a visual of the library attached to a deposit slot of a reservation or a batch.

A slot is (zoneId, faceIndex): a null face is the whole zone (one visual for every face,
`appliesToAllQualifiers`), an integer one face, `0 .. faceQuantity - 1` of the configuration.
A file is attached on the slot, never on a qualifier. Attaching a file to a slot that already
holds one replaces it; attaching a whole-zone file removes the zone's per-face files and the
other way round (the industrial switched the zone's deposit mode). The asset is locked
`FOR SHARE` while it is attached, so a concurrent deletion of it cannot win.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend import clock
from backend.db import transaction
from backend.errors import NotFound, ValidationError
from backend.marketplace.models import FurnitureZone
from backend.printing.configuration import Configuration
from backend.printing.models import PrintAsset, PrintPreflight


@dataclass(frozen=True)
class Owner:
    """The reservation or the batch a preflight belongs to (exactly one of the two)."""

    reservation_id: str | None = None
    batch_id: str | None = None

    def condition(self):
        if self.reservation_id is not None:
            return PrintPreflight.reservation_id == self.reservation_id
        return PrintPreflight.batch_id == self.batch_id


def check_slot(configuration: Configuration, zone_id: str, face_index: int | None) -> None:
    """The slot exists in the configuration: a printable zone, a face below its face quantity."""
    zone = configuration.zone(zone_id)
    if zone is None or not zone.printable:
        reason = "is not in the furniture configuration" if zone is None else "is not printable"
        raise ValidationError(f"zone {zone_id} {reason}", fields={"zoneId": [reason]}, zoneId=zone_id,
                              faceIndex=face_index)
    if face_index is not None and not 0 <= face_index < zone.face_quantity:
        raise ValidationError(
            f"zone {zone.label} has {zone.face_quantity} face(s)",
            fields={"faceIndex": [f"must be between 0 and {zone.face_quantity - 1}, or null for the whole zone"]},
            zoneId=zone_id, faceIndex=face_index,
        )


def live_asset(organization_id: str, asset_id: str) -> PrintAsset:
    """The organization's live asset, locked against deletion until the transaction ends."""
    asset = (
        PrintAsset.select()
        .where(PrintAsset.id == asset_id, PrintAsset.organization_id == organization_id,
               PrintAsset.deleted_at.is_null())
        .for_update("FOR SHARE")
        .first()
    )
    if asset is None:
        raise NotFound("print asset not found", assetId=asset_id)
    return asset


def attach(
    *, owner: Owner, configuration: Configuration, organization_id: str, zone_id: str, face_index: int | None,
    asset_id: str, user_id: str | None,
) -> PrintPreflight:
    """Attach `asset_id` to the slot (zone, face) of `owner`; the caller checked the owner is open
    to deposits and holds its lock."""
    check_slot(configuration, zone_id, face_index)
    with transaction():
        asset = live_asset(organization_id, asset_id)
        whole_zone = PrintPreflight.face_index.is_null()
        other_mode = ~whole_zone if face_index is None else whole_zone
        PrintPreflight.delete().where(owner.condition(), PrintPreflight.zone_id == zone_id, other_mode).execute()
        row = (
            PrintPreflight.insert(
                reservation_id=owner.reservation_id, batch_id=owner.batch_id, zone_id=zone_id,
                face_index=face_index, asset_id=asset.id, created_by_user_id=user_id, created_at=clock.now(),
            )
            .on_conflict(
                conflict_constraint="print_preflight_slot_key",
                update={PrintPreflight.asset_id: asset.id, PrintPreflight.created_by_user_id: user_id,
                        PrintPreflight.created_at: clock.now()},
            )
            .returning(PrintPreflight)
            .execute()
        )
        preflight = next(iter(row))
    preflight.asset = asset
    return preflight


def preflights_of(owner: Owner) -> list[PrintPreflight]:
    """The owner's preflights with their asset (`.asset`), in the configuration's zone order then
    by face: one query."""
    rows = (
        PrintPreflight.select(PrintPreflight, PrintAsset)
        .join(PrintAsset, on=PrintPreflight.asset_id == PrintAsset.id, attr="asset")
        .switch(PrintPreflight)
        .join(FurnitureZone, on=PrintPreflight.zone_id == FurnitureZone.id)
        .where(owner.condition())
        .order_by(FurnitureZone.position, PrintPreflight.face_index.asc(nulls="FIRST"))
    )
    return list(rows)
