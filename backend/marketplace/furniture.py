"""Furniture types and their zones: the configuration print deposits and batches read.

A type's configuration is a chain of immutable versions. Editing a type writes version N+1 with
new zone rows and moves `current_version`; a reservation keeps the version it was sold with
(`reservation.furniture_type_version_id`), so its zones, face quantities and sizes never change
under it, and zone ids already referenced by print lines stay valid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from peewee import IntegrityError

from backend.db import transaction
from backend.errors import NotFound, ValidationError
from backend.listing import ListParams, Page, paginate
from backend.marketplace.models import FurnitureType, FurnitureTypeVersion, FurnitureZone, violated_constraint


@dataclass(frozen=True)
class ZoneSpec:
    code: str
    label: str
    face_quantity: int
    printable: bool
    width_mm: int
    height_mm: int


def create_furniture_type(
    *, name: str, zones: Sequence[ZoneSpec], printer_organization_id: str | None = None,
    created_by_user_id: str | None = None,
) -> FurnitureTypeVersion:
    with transaction():
        furniture_type = FurnitureType.create(current_version=1)
        return _write_version(furniture_type, 1, name, zones, printer_organization_id, created_by_user_id)


def revise_furniture_type(
    furniture_type_id: str, *, name: str, zones: Sequence[ZoneSpec],
    printer_organization_id: str | None = None, created_by_user_id: str | None = None,
) -> FurnitureTypeVersion:
    """A new current version; earlier versions and their zones stay as reservations froze them."""
    with transaction():
        furniture_type = (
            FurnitureType.select().where(FurnitureType.id == furniture_type_id).for_update().first()
        )
        if furniture_type is None:
            raise NotFound("furniture type not found")
        furniture_type.current_version += 1
        furniture_type.save()
        return _write_version(
            furniture_type, furniture_type.current_version, name, zones, printer_organization_id,
            created_by_user_id,
        )


def _write_version(furniture_type, number, name, zones, printer_organization_id, created_by_user_id):
    if printer_organization_id is not None and not printer_organization_id.startswith("printer:"):
        raise ValidationError(
            "not a printer organization", fields={"printerOrganizationId": ["must be printer:<siren>"]}
        )
    try:
        with transaction():
            version = FurnitureTypeVersion.create(
                furniture_type=furniture_type, version=number, name=name.strip(),
                printer_organization_id=printer_organization_id, created_by_user_id=created_by_user_id,
            )
            version.zone_list = [
                FurnitureZone.create(furniture_type_version=version, position=position, **vars(zone))
                for position, zone in enumerate(zones)
            ]
    except IntegrityError as exc:
        constraint = violated_constraint(exc) or ""
        if constraint == "furniture_zone_code_key":
            raise ValidationError("zone codes must be unique", fields={"zones": ["duplicate code"]}) from None
        if "printer_organization" in constraint:
            raise ValidationError("unknown printer organization",
                                  fields={"printerOrganizationId": ["unknown"]}) from None
        raise
    return version


FURNITURE_SORTS = {"name": FurnitureTypeVersion.name, "createdAt": FurnitureType.created_at}


def _current():
    return (
        FurnitureTypeVersion.select()
        .join(FurnitureType)
        .where(FurnitureTypeVersion.version == FurnitureType.current_version)
    )


def list_furniture_types(params: ListParams) -> Page:
    """Current versions of the types with their zones (`zone_list`): two queries per page."""
    page = paginate(_current(), params, sorts=FURNITURE_SORTS, default_sort="name",
                    tiebreaker=FurnitureType.id, search_columns=(FurnitureTypeVersion.name,))
    _with_zones(page.items)
    return page


def current_version(furniture_type_id: str) -> FurnitureTypeVersion:
    versions = _with_zones(list(_current().where(FurnitureType.id == furniture_type_id)))
    if not versions:
        raise NotFound("furniture type not found")
    return versions[0]


def _with_zones(versions: list[FurnitureTypeVersion]) -> list[FurnitureTypeVersion]:
    by_id = {v.id: v for v in versions}
    for version in versions:
        version.zone_list = []
    if by_id:
        zones = FurnitureZone.select().where(FurnitureZone.furniture_type_version.in_(list(by_id)))
        for zone in zones.order_by(FurnitureZone.position):
            by_id[zone.furniture_type_version_id].zone_list.append(zone)
    return versions
