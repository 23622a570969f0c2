"""Industrial routes of print batches (spec B): groups of a campaign, the draft, its preflights,
preview and confirmation, and the read-only views of sent batches.

Role `industrial`, KYB approved, an active `industrial:*` organization; every query is scoped to
that organization (another organization's batch or campaign is 404).
"""

from __future__ import annotations

from api.access import INDUSTRIAL, Route
from api.operations import Answer, operation
from api.printing.preflight import PreflightResource, PreflightSlot
from api.requests import acting_organization
from backend.printing import batch_confirmation, batch_drafts, batch_preview, batch_state, batch_views
from schemas.printing.batches import (
    BatchAnswer,
    BatchDepositIn,
    BatchDetailOut,
    BatchListOut,
    ConfirmOut,
    GroupReservationsOut,
    GroupsOut,
    OpenBatchIn,
    PreviewOut,
    deposit_from,
)
from schemas.printing.deposits import PreflightListOut

BATCH = "/api/print-batches/{batch_id}"
GROUPS = "/api/campaigns/{campaign_id}/print-batches/groups"


class CampaignGroups:
    @operation(
        "The campaign's approved reservations grouped by furniture type, with their configuration",
        tags=("batches",),
        answer=GroupsOut,
        answer_description=(
            "`{groups}`; `toDepositCount` counts what a batch can take, `draftBatchId` the "
            "open draft"
        ),
    )
    def on_get(self, req, resp, campaign_id: str) -> dict:
        organization_id = acting_organization(req, "industrial")
        return {"groups": batch_drafts.campaign_groups(organization_id=organization_id, campaign_id=campaign_id)}

    @operation(
        "The reservations of one furniture group, with whether a batch can take them",
        tags=("batches",),
        answer=GroupReservationsOut,
        answer_description="`{reservations}`",
    )
    def on_get_reservations(self, req, resp, campaign_id: str, furniture_type_id: str) -> dict:
        organization_id = acting_organization(req, "industrial")
        group = batch_drafts.campaign_group(organization_id=organization_id, campaign_id=campaign_id,
                                       furniture_type_id=furniture_type_id)
        return {"reservations": group.members}

    @operation(
        "The campaign's sent batches (derived status and counters)",
        tags=("batches",),
        answer=BatchListOut,
        answer_description="`{batches}`",
    )
    def on_get_batches(self, req, resp, campaign_id: str) -> dict:
        organization_id = acting_organization(req, "industrial")
        return {"batches": batch_views.campaign_batches(organization_id=organization_id, campaign_id=campaign_id)}


class Batches:
    @operation(
        "Open, or return, the draft of (campaign, furniture type)",
        description=(
            "Idempotent while the batch is a draft (201 when created, 200 when it existed); a sent "
            "batch does not prevent a new draft."
        ),
        tags=("batches",),
        body=OpenBatchIn,
        answer=BatchAnswer,
        answer_description="the draft, created",
        status=201,
        other_answers={200: (BatchAnswer, "the draft, already open")},
    )
    def on_post(self, req, resp, body: dict) -> Answer:
        organization_id, user_id = acting_organization(req, "industrial"), req.context.principal.user_id
        batch, created = batch_drafts.open_batch(organization_id=organization_id, campaign_id=body["campaignId"],
                                                 furniture_type_id=body["promoFurnitureTypeId"], user_id=user_id)
        return Answer({"batch": batch_state.batch_state(batch)}, 201 if created else 200)


class BatchPreflights(PreflightResource):
    def check_slot(self, *, organization_id: str, zone_id: str, face_index: int | None, batch_id: str) -> None:
        batch_drafts.check_batch_preflight_slot(batch_id=batch_id, organization_id=organization_id, zone_id=zone_id,
                                                face_index=face_index)

    def attach(self, *, organization_id: str, user_id: str, slot: PreflightSlot, batch_id: str):
        return batch_drafts.attach_batch_preflight(batch_id=batch_id, organization_id=organization_id,
                                                   zone_id=slot.zone_id, face_index=slot.face_index,
                                                   asset_id=slot.asset_id, user_id=user_id)


class Batch:
    def __init__(self, deps) -> None:
        self.default_printer = deps.config.default_printer_organization_id

    @operation(
        "The batch (draft or sent) with its furniture configuration",
        tags=("batches",),
        answer=BatchAnswer,
        answer_description="the batch",
    )
    def on_get(self, req, resp, batch_id: str) -> dict:
        organization_id = acting_organization(req, "industrial")
        batch = batch_state.industrial_batch(organization_id=organization_id, batch_id=batch_id)
        return {"batch": batch_state.batch_state(batch)}

    @operation(
        "The batch's preflights",
        tags=("batches",),
        answer=PreflightListOut,
        answer_description="`{preflights}`",
    )
    def on_get_preflights(self, req, resp, batch_id: str) -> dict:
        organization_id = acting_organization(req, "industrial")
        return {"preflights": batch_drafts.list_batch_preflights(batch_id=batch_id, organization_id=organization_id)}

    @operation(
        "The confirmation's classification, split and recap, written nowhere",
        description=(
            "Same body and same 400s as the confirmation. Under target `store`, a store without a "
            "complete address is excluded (`missing_address`); under `single_address` and `none` "
            "never."
        ),
        tags=("batches",),
        body=BatchDepositIn,
        answer=PreviewOut,
        answer_description="per reservation, exclusions and the recap counters",
    )
    def on_post_preview(self, req, resp, batch_id: str, body: dict) -> batch_preview.Outcome:
        organization_id = acting_organization(req, "industrial")
        return batch_preview.preview_batch(batch_id=batch_id, organization_id=organization_id,
                                           deposit=deposit_from(body))

    @operation(
        "One pending order per retained reservation that prints anything; LOT- code; batch sent",
        description=(
            "In one transaction. 400 VALIDATION_ERROR for a retained reservation absent from "
            "`allocations`, a target `none` that still prints, a stock above the deliverable "
            "population's capacity, and the refusals of the single deposit. No order at all "
            "(everything reused): the batch is deleted, no code drawn (`deleted`). Confirming a sent "
            "batch again answers its orders (`replayed`), never a second set."
        ),
        tags=("batches",),
        body=BatchDepositIn,
        answer=ConfirmOut,
        answer_description="the orders made",
        status=201,
        other_answers={200: (ConfirmOut, "replayed, or deleted (no order)")},
    )
    def on_post_confirm(self, req, resp, batch_id: str, body: dict) -> Answer:
        organization_id = acting_organization(req, "industrial")
        outcome = batch_confirmation.confirm_batch(batch_id=batch_id, organization_id=organization_id,
                                                   deposit=deposit_from(body),
                                                   default_printer_organization_id=self.default_printer)
        return Answer(outcome, 201 if outcome.order_codes and not outcome.replayed else 200)


class IndustrialBatch:
    @operation(
        "A sent batch of the organization, with the manifest naming each store",
        tags=("batches",),
        answer=BatchDetailOut,
        answer_description="the batch",
    )
    def on_get(self, req, resp, code: str) -> batch_views.BatchView:
        organization_id = acting_organization(req, "industrial")
        return batch_views.industrial_batch_view(batch_code=code, organization_id=organization_id)


def routes(deps) -> list[Route]:
    groups, batch, preflights = CampaignGroups(), Batch(deps), BatchPreflights(deps)
    return [
        Route(GROUPS, groups, INDUSTRIAL),
        Route(GROUPS + "/{furniture_type_id}/reservations", groups, INDUSTRIAL, suffix="reservations"),
        Route("/api/campaigns/{campaign_id}/print-batches", groups, INDUSTRIAL, suffix="batches"),
        Route("/api/print-batches", Batches(), INDUSTRIAL),
        Route(BATCH, batch, INDUSTRIAL),
        Route(f"{BATCH}/upload/preflight", preflights, INDUSTRIAL, suffix="preflight"),
        Route(f"{BATCH}/upload/preflight-from-asset", preflights, INDUSTRIAL, suffix="from_asset"),
        Route(f"{BATCH}/upload/preflights", batch, INDUSTRIAL, suffix="preflights"),
        Route(f"{BATCH}/preview", batch, INDUSTRIAL, suffix="preview"),
        Route(f"{BATCH}/confirm", batch, INDUSTRIAL, suffix="confirm"),
        Route("/api/industrial/print-batches/{code}", IndustrialBatch(), INDUSTRIAL),
    ]
