"""Which reservations of a selection a print batch takes, and why it leaves out the others (spec B).

A batch takes an approved reservation of its organization, campaign and furniture type that is
still to deposit; under target `store`, only if its store has a complete address. The selection
is read in one statement as plain rows (`Selected`), locked sorted by id for a confirmation, and
classified in selection order: retained + excluded = the selection.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import NamedTuple

from backend.db import database
from backend.marketplace.models import Reservation, ReservationStatus
from backend.printing.models import DeliveryTarget, ImpressionStatus, PrintOrderBatch
from backend.printing.plans import Recipient


class Exclusion(StrEnum):
    NOT_FOUND = "not_found"  # unknown, or another organization's: never said which
    OTHER_GROUP = "other_group"  # another campaign or furniture type
    NOT_APPROVED = "not_approved"
    NOT_TO_DEPOSIT = "not_to_deposit"  # already deposited, in stock or with a printer
    MISSING_ADDRESS = "missing_address"  # target `store` only
    DUPLICATE = "duplicate"  # the same id again in the selection (the first one counts)


# Plain strings: the classification compares every selected row with these, and reading an enum
# member costs several times a module constant.
_TO_DEPOSIT = ImpressionStatus.TO_DEPOSIT.value
_APPROVED = ReservationStatus.APPROVED.value


def eligibility(reservation: Reservation | Selected) -> Exclusion | None:
    """The batch eligibility rule of an approved reservation of the right group: still to deposit."""
    if (reservation.impression_status or _TO_DEPOSIT) != _TO_DEPOSIT:
        return Exclusion.NOT_TO_DEPOSIT
    return None


@dataclass(frozen=True)
class Delivery:
    target: DeliveryTarget
    address: Recipient | None = None  # the snapshot of `single_address`
    address_id: str | None = None


class Selected(NamedTuple):
    """What classification, allocation and writing read of a selected reservation: one row of
    `SELECTION` as it comes (no model instance per reservation of a large batch)."""

    id: str
    industrial_organization_id: str
    campaign_id: str
    status: str
    impression_status: str | None
    promo_furniture_type_id: str
    store_name: str
    store_street: str | None
    store_postal_code: str | None
    store_city: str | None
    store_country: str | None


class Candidate(NamedTuple):
    reservation: Selected
    recipient: Recipient | None  # None: excluded
    exclusion: Exclusion | None


@dataclass(frozen=True)
class Classification:
    candidates: list[Candidate]  # the selection's reservations, in selection order
    set_aside: list[tuple[str, Exclusion]] = field(default_factory=list)  # not found, duplicates

    @cached_property
    def retained(self) -> list[Candidate]:
        return [c for c in self.candidates if c.exclusion is None]

    @cached_property
    def excluded(self) -> list[tuple[str, Exclusion]]:
        """Every selected id not retained, with its reason: retained + excluded = selection."""
        return [(c.reservation.id, c.exclusion) for c in self.candidates if c.exclusion is not None] + self.set_aside


NOWHERE = Recipient(DeliveryTarget.NONE)  # rule 6: no address is queried


def _recipients(delivery: Delivery) -> Callable[[Selected], Recipient | None]:
    """Where a retained reservation's order goes under `delivery`, from its row: None when it has
    nowhere to go (target `store`, a store without a complete address)."""
    if delivery.target == DeliveryTarget.NONE:
        return lambda reservation: NOWHERE
    if delivery.target == DeliveryTarget.SINGLE_ADDRESS:
        return lambda reservation: delivery.address
    return _store_recipient


def _store_recipient(reservation: Selected) -> Recipient | None:
    recipient = _new_tuple(Recipient, _TO_STORE + reservation[6:])  # the store's name and address columns
    return recipient if recipient.has_address else None


# `tuple.__new__(cls, values)`: a NamedTuple of exactly these values, without the count check of
# its own `__new__` or `_make`: for the selection's rows and their recipients.
_new_tuple = tuple.__new__
_TO_STORE = (DeliveryTarget.STORE,)


# The selection in one statement, plain rows (`Selected`): `= ANY(%s)` takes the ids as one array
# parameter (an `IN` with a placeholder per id costs more to build, send and plan than to run).
SELECTION = (
    "SELECT r.id, r.industrial_organization_id, r.campaign_id, r.status, r.impression_status,"
    " a.promo_furniture_type_id, s.name, s.street, s.postal_code, s.city, s.country"
    " FROM reservation r JOIN ad_space a ON a.id = r.ad_space_id JOIN store s ON s.id = a.store_id"
    " WHERE r.id = ANY(%s) AND r.industrial_organization_id = %s"
)
# Sorted by id: two confirmations sharing reservations lock them in the same order.
SELECTION_LOCKED = SELECTION + " ORDER BY r.id FOR UPDATE OF r"


def classify(batch: PrintOrderBatch, selection: list[str], delivery: Delivery, *, lock: bool) -> Classification:
    """Who of the selection is retained, in selection order, and why the others are not."""
    ids = list(dict.fromkeys(selection))
    rows = database.execute_sql(SELECTION_LOCKED if lock else SELECTION, (ids, batch.organization_id)).fetchall()
    found = {row[0]: _new_tuple(Selected, row) for row in rows}
    group, recipient_of = (batch.campaign_id, batch.promo_furniture_type_id), _recipients(delivery)
    candidates, seen, set_aside = [], set(), []
    for reservation_id in selection:
        if reservation_id in seen:
            set_aside.append((reservation_id, Exclusion.DUPLICATE))
            continue
        seen.add(reservation_id)
        reservation = found.get(reservation_id)
        if reservation is None:  # unknown, or another organization's
            set_aside.append((reservation_id, Exclusion.NOT_FOUND))
            continue
        reason = _exclusion(group, reservation)
        recipient = None if reason else recipient_of(reservation)
        if reason is None and recipient is None:
            reason = Exclusion.MISSING_ADDRESS
        candidates.append(_new_tuple(Candidate, (reservation, recipient, reason)))
    return Classification(candidates, set_aside)


def _exclusion(group: tuple[str, str], reservation: Selected) -> Exclusion | None:
    """Why a reservation of the batch's organization cannot join the batch of `group` (campaign,
    furniture type), or None."""
    if (reservation.campaign_id, reservation.promo_furniture_type_id) != group:
        return Exclusion.OTHER_GROUP
    if reservation.status != _APPROVED:
        return Exclusion.NOT_APPROVED
    return eligibility(reservation)
