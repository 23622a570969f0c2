"""The furniture configuration a deposit reads ("gabarits"): zones, face quantities, sizes, and
the printer that manufactures it.

The furniture of a reservation is its ad space's `promoFurnitureTypeId`. A single deposit reads
the type as it is now (`current_configuration`: its current version), so the order it makes takes
the printer and face quantities of the type when the order is created (spec B freezes quantities
at order time; API.md resolves the printer then); the lines then keep them (editing the type later
never rewrites an order). Batches still group reservations by the version frozen at checkout.
A configuration is resolvable when it has at least one printable
zone; without one, a stock declaration answers PRINT_CONFIGURATION_UNAVAILABLE.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.errors import Conflict, PrintConfigurationUnavailable
from backend.identity.models import Organization
from backend.marketplace.models import FurnitureType, FurnitureTypeVersion, FurnitureZone
from backend.printing import allocation


@dataclass(frozen=True)
class ConfigurationZone:
    id: str
    code: str
    label: str
    face_quantity: int
    printable: bool
    width_mm: int
    height_mm: int
    position: int

    def as_allocation_zone(self) -> allocation.Zone:
        return allocation.Zone(self.id, self.label, self.face_quantity, self.printable)


@dataclass(frozen=True)
class Configuration:
    furniture_type_id: str
    version_id: str
    version: int
    name: str
    printer_organization_id: str | None
    zones: tuple[ConfigurationZone, ...]

    @property
    def printable_zones(self) -> tuple[ConfigurationZone, ...]:
        return tuple(zone for zone in self.zones if zone.printable)

    @property
    def printable_zone_count(self) -> int:
        return len(self.printable_zones)

    @property
    def allocation_zones(self) -> list[allocation.Zone]:
        return [zone.as_allocation_zone() for zone in self.zones]

    def zone(self, zone_id: str) -> ConfigurationZone | None:
        return next((zone for zone in self.zones if zone.id == zone_id), None)

    def require_printable(self) -> Configuration:
        if not self.printable_zone_count:
            raise PrintConfigurationUnavailable(
                "the furniture of this reservation has no printable zone", furnitureTypeId=self.furniture_type_id
            )
        return self


def configuration_of_versions(version_ids: list[str]) -> dict[str, Configuration]:
    """The configurations of furniture versions, by version id (two queries, whatever the count)."""
    versions = list(FurnitureTypeVersion.select().where(FurnitureTypeVersion.id.in_(version_ids)))
    zones: dict[str, list[ConfigurationZone]] = {v.id: [] for v in versions}
    rows = (FurnitureZone.select().where(FurnitureZone.furniture_type_version.in_(list(zones)))
            .order_by(FurnitureZone.position))
    for zone in rows:
        zones[zone.furniture_type_version_id].append(ConfigurationZone(
            zone.id, zone.code, zone.label, zone.face_quantity, zone.printable, zone.width_mm, zone.height_mm,
            zone.position,
        ))
    return {
        v.id: Configuration(v.furniture_type_id, v.id, v.version, v.name, v.printer_organization_id,
                            tuple(zones[v.id]))
        for v in versions
    }


def configuration_of(version_id: str) -> Configuration:
    return configuration_of_versions([version_id])[version_id]


def current_configuration(frozen_version_id: str) -> Configuration:
    """The configuration of the current version of the furniture type whose version
    `frozen_version_id` is (the one a reservation was sold with)."""
    current = (FurnitureTypeVersion.select(FurnitureTypeVersion.id)
               .join(FurnitureType, on=(FurnitureTypeVersion.furniture_type == FurnitureType.id))
               .where(FurnitureTypeVersion.version == FurnitureType.current_version,
                      FurnitureType.id == FurnitureTypeVersion.select(FurnitureTypeVersion.furniture_type)
                      .where(FurnitureTypeVersion.id == frozen_version_id))
               .scalar())
    return configuration_of(current or frozen_version_id)


def printer_for(configuration: Configuration, default_printer_organization_id: str | None) -> str:
    """The printer organization manufacturing this furniture: the type's own, else the platform
    default (`DEFAULT_PRINTER_ORGANIZATION_ID`), read when the order is made."""
    printer = configuration.printer_organization_id or default_printer_organization_id
    known = printer and Organization.select().where(
        Organization.id == printer, Organization.actor_type == "printer"
    ).exists()
    if not known:
        raise Conflict(
            "no printer manufactures this furniture type; set DEFAULT_PRINTER_ORGANIZATION_ID or the type's printer",
            reason="printer_not_configured", furnitureTypeId=configuration.furniture_type_id,
        )
    return printer
