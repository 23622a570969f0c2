"""Which reservations of a selection a print batch takes, and why it leaves out the others (spec B).

A batch takes an approved reservation of its organization, campaign and furniture type that is
still to deposit; under target `store`, only if its store has a complete address. The selection
is read in one statement as plain rows (`Selected`), locked sorted by id for a confirmation, each
with the reason the batch leaves it out, computed by that statement (`SELECTION`): Python only
puts the rows in selection order, sets aside unknown ids and duplicates (when the rows are fewer
than the selection), and gives a retained reservation its recipient when an order is written.
Retained + excluded = the selection.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property, partial
from operator import itemgetter
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


_TO_DEPOSIT = ImpressionStatus.TO_DEPOSIT.value


def eligibility(reservation: Reservation | Selected) -> Exclusion | None:
    """The batch eligibility rule of an approved reservation of the right group: still to deposit
    (`SELECTION` applies the same rule to a selection, in SQL)."""
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
    exclusion: str | None  # why the batch leaves it out (an `Exclusion` value), None: retained


@dataclass(frozen=True)
class Classification:
    """The selection's reservations found, in selection order (first occurrence), each with the
    reason the batch leaves it out (`Selected.exclusion`, None: retained), and the ids set aside
    (not found, duplicates)."""

    rows: list[Selected]
    delivery: Delivery
    set_aside: list[tuple[str, Exclusion]] = field(default_factory=list)

    @cached_property
    def retained(self) -> list[Selected]:
        return [row for row in self.rows if row.exclusion is None]

    @cached_property
    def excluded(self) -> list[tuple[str, Exclusion]]:
        """Every selected id not retained, with its reason: retained + excluded = selection."""
        return [(row.id, _EXCLUSIONS[row.exclusion]) for row in self.rows if row.exclusion is not None] + self.set_aside

    @cached_property
    def recipient_of(self) -> Callable[[Selected], Recipient]:
        """Where a retained reservation's order goes, from its row."""
        if self.delivery.target == DeliveryTarget.NONE:
            return lambda reservation: NOWHERE
        if self.delivery.target == DeliveryTarget.SINGLE_ADDRESS:
            return lambda reservation: self.delivery.address
        return _store_recipient


NOWHERE = Recipient(DeliveryTarget.NONE)  # rule 6: no address is queried


def _store_recipient(reservation: Selected) -> Recipient:
    """The store, whose address `SELECTION` found complete."""
    return _new_tuple(Recipient, _TO_STORE + reservation[6:11])  # the store's name and address columns


# `tuple.__new__(cls, values)`: a NamedTuple of exactly these values, without the count check of
# its own `__new__` or `_make`: for the selection's rows and their recipients.
_new_tuple = tuple.__new__
_TO_STORE = (DeliveryTarget.STORE,)
_AS_SELECTED = partial(_new_tuple, Selected)
_ID = itemgetter(0)  # a row's reservation id


# The selection in one statement, plain rows (`Selected`): `= ANY(%(ids)s)` takes the ids as one
# array parameter (an `IN` with a placeholder per id costs more to build, send and plan than to
# run). Each row comes with the reason the batch of `group` leaves it out, in the order the rules
# apply: another campaign or furniture type, not approved, not to deposit (`eligibility`), and,
# under target `store`, a store without a complete address (`Recipient.has_address`).
SELECTION = (
    "SELECT r.id, r.industrial_organization_id, r.campaign_id, r.status, r.impression_status,"  # noqa: S608 - constants
    " a.promo_furniture_type_id, s.name, s.street, s.postal_code, s.city, s.country,"
    " CASE WHEN r.campaign_id IS DISTINCT FROM %(campaign)s"
    f" OR a.promo_furniture_type_id IS DISTINCT FROM %(furniture_type)s THEN '{Exclusion.OTHER_GROUP}'"
    f" WHEN r.status <> '{ReservationStatus.APPROVED}' THEN '{Exclusion.NOT_APPROVED}'"
    f" WHEN COALESCE(r.impression_status, '{_TO_DEPOSIT}') <> '{_TO_DEPOSIT}' THEN '{Exclusion.NOT_TO_DEPOSIT}'"
    " WHEN %(to_store)s AND (COALESCE(s.street, '') = '' OR COALESCE(s.postal_code, '') = ''"
    f" OR COALESCE(s.city, '') = '') THEN '{Exclusion.MISSING_ADDRESS}' END"
    " FROM reservation r JOIN ad_space a ON a.id = r.ad_space_id JOIN store s ON s.id = a.store_id"
    " WHERE r.id = ANY(%(ids)s) AND r.industrial_organization_id = %(organization)s"
)
# Sorted by id: two confirmations sharing reservations lock them in the same order.
SELECTION_LOCKED = SELECTION + " ORDER BY r.id FOR UPDATE OF r"
_EXCLUSIONS = {reason.value: reason for reason in Exclusion}


def selection_parameters(batch: PrintOrderBatch, ids: list[str], delivery: Delivery) -> dict:
    """`SELECTION`'s parameters for the batch's selection of `ids` under `delivery`."""
    return {"ids": ids, "organization": batch.organization_id, "campaign": batch.campaign_id,
            "furniture_type": batch.promo_furniture_type_id, "to_store": delivery.target == DeliveryTarget.STORE}


def classify(batch: PrintOrderBatch, selection: list[str], delivery: Delivery, *, lock: bool) -> Classification:
    """Who of the selection is retained, in selection order, and why the others are not."""
    ids = list(dict.fromkeys(selection))
    fetched = database.execute_sql(SELECTION_LOCKED if lock else SELECTION,
                                   selection_parameters(batch, ids, delivery)).fetchall()
    found = dict(zip(map(_ID, fetched), map(_AS_SELECTED, fetched), strict=True))
    rows = list(filter(None, map(found.get, ids)))  # in selection order (a row is never empty)
    if len(rows) == len(selection):  # every id found once: nothing set aside
        return Classification(rows, delivery)
    seen, set_aside = set(), []
    for reservation_id in selection:
        if reservation_id in seen:
            set_aside.append((reservation_id, Exclusion.DUPLICATE))
        elif reservation_id not in found:  # unknown, or another organization's
            set_aside.append((reservation_id, Exclusion.NOT_FOUND))
        seen.add(reservation_id)
    return Classification(rows, delivery, set_aside)
