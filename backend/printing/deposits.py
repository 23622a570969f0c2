"""The single deposit of visuals for one reservation (spec B), by its industrial organization.

    preflight (a file per slot) -> upload/confirm -> draft order, `in_review`
                                                 -> nothing printed: `in_stock`, no order
    print-support {inStock: true}               -> every face reused: `in_stock`, no order
    print-support {inStock: false} (from in_stock) -> `to_deposit`

A deposit is open while the reservation is `approved` and its deposit status is `to_deposit`,
`in_review` or `in_stock`; a new confirmation or declaration replaces the previous one (its draft
order is deleted: a draft never reached a printer). Once an admin has released the order
(`validated`) or the printer has taken it (`locked`) the deposit is closed: 409 CONFLICT.

The calculation is the batch one with a population of one (`allocation.plan_deposit`), and the
rows are written by `plans.write_plans`, the batch confirmation's writer.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.db import transaction
from backend.errors import Conflict, NotFound, ValidationError
from backend.marketplace.models import AdSpace, Reservation, ReservationStatus, Store
from backend.printing import allocation, impressions, preflights
from backend.printing.allocation import DepositedFile, Slot
from backend.printing.configuration import Configuration, current_configuration, printer_for
from backend.printing.impressions import ImpressionItem, shown_impression_status
from backend.printing.models import ImpressionStatus, PrintPreflight, PrintReusedFace
from backend.printing.order_views import OrderView, active_order_view
from backend.printing.plans import PlanWrite, Recipient, discard_draft, write_plans
from backend.printing.status import PrintOrderStatus

OPEN_STATUSES = (None, ImpressionStatus.TO_DEPOSIT, ImpressionStatus.IN_REVIEW, ImpressionStatus.IN_STOCK)


def industrial_reservation(reservation_id: str, organization_id: str, *, lock: str | None = None) -> Reservation:
    """The organization's reservation (404 for anyone else's), optionally locked."""
    query = Reservation.select().where(
        Reservation.id == reservation_id, Reservation.industrial_organization_id == organization_id
    )
    reservation = (query.for_update(lock) if lock else query).first()
    if reservation is None:
        raise NotFound("reservation not found")
    return reservation


def _open(reservation: Reservation) -> Reservation:
    if reservation.status != ReservationStatus.APPROVED:
        raise Conflict("visuals are deposited for an approved reservation", reason="reservation_not_approved",
                       status=reservation.status)
    if reservation.impression_status not in OPEN_STATUSES:
        raise Conflict("the deposit is closed: the order is validated or with the printer",
                       reason="deposit_locked", impressionStatus=reservation.impression_status)
    return reservation


def open_deposit(reservation_id: str) -> bool:
    """The consumer of `reservation.approved`: an approved reservation with no deposit status yet
    becomes `to_deposit`. Idempotent (False when there was nothing to do)."""
    return bool(
        Reservation.update(impression_status=ImpressionStatus.TO_DEPOSIT)
        .where(Reservation.id == reservation_id, Reservation.status == ReservationStatus.APPROVED,
               Reservation.impression_status.is_null())
        .execute()
    )


def reservation_configuration(*, reservation_id: str, organization_id: str) -> tuple[Reservation, Configuration]:
    """The reservation and its furniture configuration (`GET .../gabarits`)."""
    reservation = industrial_reservation(reservation_id, organization_id)
    return reservation, current_configuration(reservation.furniture_type_version_id)


def attach_preflight(
    *, reservation_id: str, organization_id: str, zone_id: str, face_index: int | None, asset_id: str,
    user_id: str | None,
) -> PrintPreflight:
    with transaction():
        reservation = _open(industrial_reservation(reservation_id, organization_id, lock="FOR SHARE"))
        return preflights.attach(
            owner=preflights.Owner(reservation_id=reservation.id),
            configuration=current_configuration(reservation.furniture_type_version_id), organization_id=organization_id,
            zone_id=zone_id, face_index=face_index, asset_id=asset_id, user_id=user_id,
        )


def check_preflight_slot(*, reservation_id: str, organization_id: str, zone_id: str, face_index: int | None) -> None:
    """Before a file is uploaded for a slot: the reservation is open and the slot exists."""
    reservation = _open(industrial_reservation(reservation_id, organization_id))
    preflights.check_slot(current_configuration(reservation.furniture_type_version_id), zone_id, face_index)


def list_preflights(*, reservation_id: str, organization_id: str) -> list[PrintPreflight]:
    reservation = industrial_reservation(reservation_id, organization_id)
    return preflights.preflights_of(preflights.Owner(reservation_id=reservation.id))


def _deposited_files(reservation: Reservation, configuration: Configuration, organization_id: str,
                     confirmed: list[Slot]) -> list[DepositedFile]:
    """The files the industrial confirms: the assets attached to those slots by preflights."""
    attached = {
        (p.zone_id, p.face_index): p.asset_id
        for p in PrintPreflight.select().where(PrintPreflight.reservation_id == reservation.id)
    }
    files = []
    for slot in confirmed:
        preflights.check_slot(configuration, slot.zone_id, slot.face_index)
        asset_id = attached.get((slot.zone_id, slot.face_index))
        if asset_id is None:
            raise ValidationError("no file is attached to this slot: send a preflight first",
                                  zoneId=slot.zone_id, faceIndex=slot.face_index,
                                  fields={"confirmedFiles": ["a slot without a preflight"]})
        files.append(DepositedFile(slot.zone_id, slot.face_index, asset_id))
    for asset_id in sorted({file.asset_id for file in files}):
        preflights.live_asset(organization_id, asset_id)  # FOR SHARE until the lines commit
    return files


def _write(reservation: Reservation, configuration: Configuration, plan: allocation.ReservationPlan,
           default_printer_organization_id: str | None) -> None:
    printer = printer_for(configuration, default_printer_organization_id) if plan.lines else None
    store = Store.select().join(AdSpace).where(AdSpace.id == reservation.ad_space_id).get()
    discard_draft(reservation.id)
    write_plans([PlanWrite(reservation, plan, Recipient.of_store(store))], printer_organization_id=printer,
                status=PrintOrderStatus.DRAFT)


def confirm_deposit(
    *, reservation_id: str, organization_id: str, confirmed_files: list[Slot], reuse: list[Slot],
    default_printer_organization_id: str | None,
) -> DepositState:
    """Confirm the deposit: refusals 1-4 of the shared calculation, then the draft order (or
    `in_stock` when every face is reused)."""
    with transaction():
        reservation = _open(industrial_reservation(reservation_id, organization_id, lock="FOR UPDATE"))
        configuration = current_configuration(reservation.furniture_type_version_id)
        files = _deposited_files(reservation, configuration, organization_id, confirmed_files)
        plan = allocation.plan_deposit(configuration.allocation_zones, [reservation.id], files,
                                       reused_slots=reuse).reservations[0]
        _write(reservation, configuration, plan, default_printer_organization_id)
    return deposit_state(reservation_id=reservation_id, organization_id=organization_id)


def declare_print_support(
    *, reservation_id: str, organization_id: str, in_stock: bool, default_printer_organization_id: str | None,
) -> DepositState:
    """`inStock: true`: every printable face of the configuration is declared reused (the same rows
    as a deposit reusing every face). `inStock: false` withdraws a stock declaration."""
    with transaction():
        reservation = _open(industrial_reservation(reservation_id, organization_id, lock="FOR UPDATE"))
        configuration = current_configuration(reservation.furniture_type_version_id).require_printable()
        if in_stock:
            every_face = [Slot(z.id, f) for z in configuration.printable_zones for f in range(z.face_quantity)]
            plan = allocation.plan_deposit(configuration.allocation_zones, [reservation.id], [],
                                           reused_slots=every_face).reservations[0]
            _write(reservation, configuration, plan, default_printer_organization_id)
        elif reservation.impression_status == ImpressionStatus.IN_STOCK:
            discard_draft(reservation.id)
            Reservation.update(impression_status=ImpressionStatus.TO_DEPOSIT, print_support_mode=None).where(
                Reservation.id == reservation.id).execute()
        else:
            raise Conflict("no stock declaration to withdraw", reason="not_in_stock",
                           impressionStatus=shown_impression_status(reservation.impression_status,
                                                                    reservation.status))
    return deposit_state(reservation_id=reservation_id, organization_id=organization_id)


@dataclass(frozen=True)
class DepositState:
    reservation: Reservation
    order: OrderView | None  # the active order (latest not cancelled), qualifiers never shown
    reused: list[PrintReusedFace]

    @property
    def impression_status(self) -> str | None:
        return shown_impression_status(self.reservation.impression_status, self.reservation.status)


@dataclass(frozen=True)
class ImpressionDetail(ImpressionItem):
    deposit: DepositState


def impression_detail(*, organization_id: str, reservation_id: str) -> ImpressionDetail:
    """The impression of one of the organization's reservations with its deposit (404 otherwise)."""
    item = impressions.impression(organization_id=organization_id, reservation_id=reservation_id)
    if item is None:
        raise NotFound("reservation not found")
    state = deposit_state(reservation_id=reservation_id, organization_id=organization_id)
    return ImpressionDetail(item.reservation, item.impression_status, item.order, state)


def deposit_state(*, reservation_id: str, organization_id: str) -> DepositState:
    reservation = industrial_reservation(reservation_id, organization_id)
    reused = list(PrintReusedFace.select().where(PrintReusedFace.reservation_id == reservation.id)
                  .order_by(PrintReusedFace.zone_id, PrintReusedFace.face_index))
    return DepositState(reservation, active_order_view(reservation.id), reused)
