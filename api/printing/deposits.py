"""Industrial routes of spec B for the single deposit: furniture templates, preflights, the
confirmation, stock declarations, and the impressions list and page.

Role `industrial`, KYB approved, an active `industrial:*` organization; every query is scoped to
that organization (another organization's reservation is 404).
"""

from __future__ import annotations

from api.access import INDUSTRIAL, Route
from api.operations import operation
from api.printing.preflight import PreflightResource, PreflightSlot
from api.requests import acting_organization
from backend.listing import ListParams
from backend.printing import deposits, impressions
from backend.printing.allocation import Slot
from schemas.printing.deposits import (
    DepositConfirmIn,
    DepositOut,
    GabaritsOut,
    ImpressionDetailOut,
    ImpressionItemPage,
    ImpressionsQuery,
    PreflightListOut,
    PrintSupportIn,
)

BASE = "/api/reservations/{reservation_id}"


def slots(items: list[dict]) -> list[Slot]:
    return [Slot(item["zoneId"], item["faceIndex"]) for item in items]


class Gabarits:
    @operation(
        "The furniture of the reservation's ad space (version frozen at checkout) with its zones",
        tags=("deposit",),
        answer=GabaritsOut,
        answer_description="zones with face quantity, printable flag and size; `printableZoneCount`",
    )
    def on_get(self, req, resp, reservation_id: str) -> dict:
        organization_id = acting_organization(req, "industrial")
        reservation, configuration = deposits.reservation_configuration(
            reservation_id=reservation_id, organization_id=organization_id)
        return {"reservation": reservation, "configuration": configuration}


class DepositPreflights(PreflightResource):
    def check_slot(self, *, organization_id: str, zone_id: str, face_index: int | None, reservation_id: str) -> None:
        deposits.check_preflight_slot(reservation_id=reservation_id, organization_id=organization_id, zone_id=zone_id,
                                      face_index=face_index)

    def attach(self, *, organization_id: str, user_id: str, slot: PreflightSlot, reservation_id: str):
        return deposits.attach_preflight(reservation_id=reservation_id, organization_id=organization_id,
                                         zone_id=slot.zone_id, face_index=slot.face_index, asset_id=slot.asset_id,
                                         user_id=user_id)


class Deposit:
    def __init__(self, deps) -> None:
        self.default_printer = deps.config.default_printer_organization_id

    @operation(
        "The reservation's preflights, by zone and face",
        tags=("deposit",),
        answer=PreflightListOut,
        answer_description="the preflights with their visual",
    )
    def on_get_preflights(self, req, resp, reservation_id: str) -> dict:
        organization_id = acting_organization(req, "industrial")
        return {"preflights": deposits.list_preflights(reservation_id=reservation_id, organization_id=organization_id)}

    @operation(
        "Deposit status, support mode, the active order recap and the reused faces",
        tags=("deposit",),
        answer=DepositOut,
        answer_description="the deposit",
    )
    def on_get(self, req, resp, reservation_id: str) -> deposits.DepositState:
        organization_id = acting_organization(req, "industrial")
        return deposits.deposit_state(reservation_id=reservation_id, organization_id=organization_id)

    @operation(
        "Confirm the files of the slots (preflights) and the faces reused; creates the draft order",
        description=(
            "Refused with 400 VALIDATION_ERROR (details `zoneId`, `faceIndex`) for a zone outside the "
            "configuration, more files than faces, a reuse above the zone's capacity, or a face with "
            "neither a file nor a reuse. Quantities come from the configuration. Everything reused: "
            "no order, deposit `in_stock`. Otherwise a draft order and deposit `in_review`, until an "
            "admin releases it. Replaces a previous deposit still open."
        ),
        tags=("deposit",),
        body=DepositConfirmIn,
        answer=DepositOut,
        answer_description="the deposit",
    )
    def on_post_confirm(self, req, resp, reservation_id: str, body: dict) -> deposits.DepositState:
        organization_id = acting_organization(req, "industrial")
        return deposits.confirm_deposit(
            reservation_id=reservation_id, organization_id=organization_id,
            confirmed_files=slots(body["confirmedFiles"]), reuse=slots(body["reuse"]),
            default_printer_organization_id=self.default_printer,
        )

    @operation(
        "`inStock: true`: every face of the furniture is already in stock (no order); false withdraws it",
        description=(
            "The reused faces are derived from the furniture configuration. 409 "
            "PRINT_CONFIGURATION_UNAVAILABLE when the furniture has no printable zone; 409 CONFLICT "
            "when the deposit is closed."
        ),
        tags=("deposit",),
        body=PrintSupportIn,
        answer=DepositOut,
        answer_description="the deposit",
    )
    def on_patch_support(self, req, resp, reservation_id: str, body: dict) -> deposits.DepositState:
        organization_id = acting_organization(req, "industrial")
        return deposits.declare_print_support(
            reservation_id=reservation_id, organization_id=organization_id, in_stock=body["inStock"],
            default_printer_organization_id=self.default_printer,
        )


class Impressions:
    @operation(
        "Approved reservations with their deposit status, active order and batch",
        description=(
            "`printOrderStatus` and `batchCode` come from the latest order that is not cancelled; "
            "`route` is the batch wizard of the campaign for a reservation still to deposit with a "
            "printable furniture, else its own page; `action` is view_order while the deposit is in "
            "review or validated, else manage_print. Filters `campaignId`, `impressionStatus`; sortBy "
            "startsAt (default), createdAt, updatedAt, impressionStatus, storeName."
        ),
        tags=("deposit",),
        query=ImpressionsQuery,
        answer=ImpressionItemPage,
        answer_description="a page of impressions",
    )
    def on_get(self, req, resp, query: dict):
        organization_id = acting_organization(req, "industrial")
        return impressions.impressions(organization_id=organization_id, params=ListParams.from_query(query),
                                       campaign_id=query["campaignId"], impression_status=query["impressionStatus"])

    @operation(
        "The impression of one reservation with its deposit",
        tags=("deposit",),
        answer=ImpressionDetailOut,
        answer_description="the impression and its deposit",
    )
    def on_get_item(self, req, resp, reservation_id: str) -> deposits.ImpressionDetail:
        organization_id = acting_organization(req, "industrial")
        return deposits.impression_detail(organization_id=organization_id, reservation_id=reservation_id)


def routes(deps) -> list[Route]:
    deposit, listing, preflight = Deposit(deps), Impressions(), DepositPreflights(deps)
    return [
        Route(f"{BASE}/gabarits", Gabarits(), INDUSTRIAL),
        Route(f"{BASE}/upload/preflight", preflight, INDUSTRIAL, suffix="preflight"),
        Route(f"{BASE}/upload/preflight-from-asset", preflight, INDUSTRIAL, suffix="from_asset"),
        Route(f"{BASE}/upload/preflights", deposit, INDUSTRIAL, suffix="preflights"),
        Route(f"{BASE}/upload/confirm", deposit, INDUSTRIAL, suffix="confirm"),
        Route(f"{BASE}/print-support", deposit, INDUSTRIAL, suffix="support"),
        Route(f"{BASE}/print-deposit", deposit, INDUSTRIAL),
        Route("/api/industrial/impressions", listing, INDUSTRIAL),
        Route("/api/industrial/impressions/{reservation_id}", listing, INDUSTRIAL, suffix="item"),
    ]
