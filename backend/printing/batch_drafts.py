"""The groups a print batch is built from, and its draft (spec B).

A campaign's approved reservations are grouped by furniture type (the grouping key with the
campaign); a group has at most one open draft, which takes the batch's preflights until it is
confirmed (`batch_confirmation`).
"""

from __future__ import annotations

from dataclasses import dataclass

from backend import clock
from backend.db import transaction
from backend.errors import NotFound
from backend.marketplace.models import (
    AdSpace,
    Campaign,
    Reservation,
    ReservationStatus,
    Store,
)
from backend.model import new_id
from backend.printing import preflights
from backend.printing.batch_selection import Exclusion, eligibility
from backend.printing.batch_state import DRAFT, industrial_batch, require_draft
from backend.printing.configuration import Configuration, current_configuration
from backend.printing.models import PrintOrderBatch, PrintPreflight


def _campaign(organization_id: str, campaign_id: str) -> Campaign:
    campaign = Campaign.get_or_none(Campaign.id == campaign_id, Campaign.organization_id == organization_id)
    if campaign is None:
        raise NotFound("campaign not found")
    return campaign


def _group_reservations(organization_id: str, campaign_id: str):
    return (
        Reservation.select(Reservation, AdSpace, Store)
        .join(AdSpace)
        .join(Store)
        .where(Reservation.industrial_organization_id == organization_id, Reservation.campaign == campaign_id,
               Reservation.status == ReservationStatus.APPROVED)
    )


@dataclass(frozen=True)
class Group:
    furniture_type_id: str
    configuration: Configuration
    reservations: list[Reservation]
    draft_batch_id: str | None

    @property
    def members(self) -> list[GroupMember]:
        """Each reservation of the group with why a batch of the group cannot take it (or None)."""
        return [GroupMember(r, eligibility(r)) for r in self.reservations]

    @property
    def to_deposit_count(self) -> int:
        return sum(1 for member in self.members if member.eligible)


@dataclass(frozen=True)
class GroupMember:
    reservation: Reservation
    exclusion: Exclusion | None

    @property
    def eligible(self) -> bool:
        return self.exclusion is None


def campaign_groups(*, organization_id: str, campaign_id: str) -> list[Group]:
    """The campaign's approved reservations grouped by furniture type (the grouping key with the
    campaign), each group with its configuration and its open draft."""
    _campaign(organization_id, campaign_id)
    by_type: dict[str, list[Reservation]] = {}
    for reservation in _group_reservations(organization_id, campaign_id).order_by(Store.name, Reservation.id):
        by_type.setdefault(reservation.ad_space.promo_furniture_type_id, []).append(reservation)
    configurations = {type_id: current_configuration(reservations[0].furniture_type_version_id)
                      for type_id, reservations in by_type.items()}
    drafts = dict(
        PrintOrderBatch.select(PrintOrderBatch.promo_furniture_type_id, PrintOrderBatch.id)
        .where(PrintOrderBatch.organization_id == organization_id, PrintOrderBatch.campaign_id == campaign_id,
               PrintOrderBatch.status == DRAFT)
        .tuples()
    )
    return [Group(type_id, configurations[type_id], reservations, drafts.get(type_id))
            for type_id, reservations in sorted(by_type.items(), key=lambda kv: configurations[kv[0]].name)]


def campaign_group(*, organization_id: str, campaign_id: str, furniture_type_id: str) -> Group:
    for group in campaign_groups(organization_id=organization_id, campaign_id=campaign_id):
        if group.furniture_type_id == furniture_type_id:
            return group
    raise NotFound("no reservation of this furniture type in the campaign")


def open_batch(*, organization_id: str, campaign_id: str, furniture_type_id: str,
               user_id: str | None) -> tuple[PrintOrderBatch, bool]:
    """The draft of (organization, campaign, furniture type), created if there is none: (batch,
    created). The partial unique index on drafts decides between concurrent opens."""
    group = campaign_group(organization_id=organization_id, campaign_id=campaign_id,
                           furniture_type_id=furniture_type_id)
    with transaction():
        moment = clock.now()
        inserted = (
            PrintOrderBatch.insert(
                id=new_id(), organization_id=organization_id, campaign_id=campaign_id,
                promo_furniture_type_id=furniture_type_id, furniture_type_version_id=group.configuration.version_id,
                status=DRAFT, created_by_user_id=user_id, created_at=moment, updated_at=moment,
            )
            .on_conflict_ignore()
            .returning(PrintOrderBatch.id)
            .execute()
        )
        created = bool(list(inserted))
        batch = PrintOrderBatch.get(
            PrintOrderBatch.organization_id == organization_id, PrintOrderBatch.campaign_id == campaign_id,
            PrintOrderBatch.promo_furniture_type_id == furniture_type_id, PrintOrderBatch.status == DRAFT,
        )
    return batch, created


def attach_batch_preflight(*, batch_id: str, organization_id: str, zone_id: str, face_index: int | None,
                           asset_id: str, user_id: str | None) -> PrintPreflight:
    with transaction():
        batch = require_draft(industrial_batch(organization_id=organization_id, batch_id=batch_id, lock=True))
        return preflights.attach(
            owner=preflights.Owner(batch_id=batch.id),
            configuration=current_configuration(batch.furniture_type_version_id),
            organization_id=organization_id, zone_id=zone_id, face_index=face_index, asset_id=asset_id,
            user_id=user_id,
        )


def check_batch_preflight_slot(*, batch_id: str, organization_id: str, zone_id: str, face_index: int | None) -> None:
    batch = require_draft(industrial_batch(organization_id=organization_id, batch_id=batch_id))
    preflights.check_slot(current_configuration(batch.furniture_type_version_id), zone_id, face_index)


def list_batch_preflights(*, batch_id: str, organization_id: str) -> list[PrintPreflight]:
    batch = industrial_batch(organization_id=organization_id, batch_id=batch_id)
    return preflights.preflights_of(preflights.Owner(batch_id=batch.id))
