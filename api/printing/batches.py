"""Industrial routes of print batches (spec B): groups of a campaign, the draft, its preflights,
preview and confirmation, and the read-only views of sent batches.

Role `industrial`, KYB approved, an active `industrial:*` organization; every query is scoped to
that organization (another organization's batch or campaign is 404).
"""

from __future__ import annotations

from api.access import INDUSTRIAL, Route
from api.printing.preflight import read_preflight
from api.requests import MULTIPART_ALLOWANCE, acting_organization, load
from api.responses import send
from backend.printing import batch_views, batches
from schemas.printing.batches import (
    BatchDepositIn,
    OpenBatchIn,
    batch_detail_out,
    batch_list_item_out,
    batch_out,
    confirm_out,
    deposit_from,
    group_out,
    group_reservation_out,
    preview_out,
)
from schemas.printing.deposits import preflight_out

BATCH = "/api/print-batches/{batch_id}"
GROUPS = "/api/campaigns/{campaign_id}/print-batches/groups"


class CampaignGroups:
    def on_get(self, req, resp, campaign_id: str) -> None:
        """Groups of a campaign.
        ---
        summary: The campaign's approved reservations grouped by furniture type, with their configuration
        tags: [batches]
        responses:
          200:
            description: "`{groups}`; `toDepositCount` counts what a batch can take, `draftBatchId` the open draft"
            content:
              application/json:
                schema: GroupsOutEnvelope
        """
        organization_id = acting_organization(req, "industrial")
        groups = batches.campaign_groups(organization_id=organization_id, campaign_id=campaign_id)
        send(resp, {"groups": [group_out(group) for group in groups]})

    def on_get_reservations(self, req, resp, campaign_id: str, furniture_type_id: str) -> None:
        """Reservations of a group.
        ---
        summary: The reservations of one furniture group, with whether a batch can take them
        tags: [batches]
        responses:
          200:
            description: "`{reservations}`"
            content:
              application/json:
                schema: GroupReservationsOutEnvelope
        """
        organization_id = acting_organization(req, "industrial")
        group = batches.campaign_group(organization_id=organization_id, campaign_id=campaign_id,
                                       furniture_type_id=furniture_type_id)
        send(resp, {"reservations": [group_reservation_out(group, r) for r in group.reservations]})

    def on_get_batches(self, req, resp, campaign_id: str) -> None:
        """Sent batches of a campaign.
        ---
        summary: The campaign's sent batches (derived status and counters)
        tags: [batches]
        responses:
          200:
            description: "`{batches}`"
            content:
              application/json:
                schema: BatchListOutEnvelope
        """
        organization_id = acting_organization(req, "industrial")
        rows = batch_views.campaign_batches(organization_id=organization_id, campaign_id=campaign_id)
        send(resp, {"batches": [batch_list_item_out(batch) for batch in rows]})


class Batches:
    def on_post(self, req, resp) -> None:
        """Open the draft.
        ---
        summary: Open, or return, the draft of (campaign, furniture type)
        description: Idempotent while the batch is a draft (201 when created, 200 when it existed); a sent batch
          does not prevent a new draft.
        tags: [batches]
        requestBody:
          content:
            application/json:
              schema: OpenBatchIn
        responses:
          201:
            description: the draft
            content:
              application/json:
                schema: BatchAnswerEnvelope
        """
        organization_id, user_id = acting_organization(req, "industrial"), req.context.principal.user_id
        body = load(req, OpenBatchIn())
        batch, created = batches.open_batch(organization_id=organization_id, campaign_id=body["campaignId"],
                                            furniture_type_id=body["promoFurnitureTypeId"], user_id=user_id)
        send(resp, {"batch": batch_out(batch)}, status=201 if created else 200)


class Batch:
    def __init__(self, deps) -> None:
        self.storage = deps.storage
        self.default_printer = deps.config.default_printer_organization_id
        self.max_file_bytes = deps.config.print_asset_max_bytes
        self.max_body_bytes = self.max_file_bytes + MULTIPART_ALLOWANCE

    def on_get(self, req, resp, batch_id: str) -> None:
        """A batch of the organization.
        ---
        summary: The batch (draft or sent) with its furniture configuration
        tags: [batches]
        responses:
          200:
            description: the batch
            content:
              application/json:
                schema: BatchAnswerEnvelope
        """
        organization_id = acting_organization(req, "industrial")
        send(resp, {"batch": batch_out(batches.industrial_batch(organization_id=organization_id,
                                                                batch_id=batch_id))})

    def on_post_preflight(self, req, resp, batch_id: str) -> None:
        """Attach a file to a slot of the batch.
        ---
        summary: Attach a visual to (zoneId, faceIndex) of the batch; a new file (multipart) or an existing asset (JSON)
        description: >
          multipart/form-data: parts `zoneId`, `faceIndex` (empty for the whole zone), then `file` (uploaded to the
          library, same checks as POST /api/print-assets). application/json: PreflightFromAssetIn. 409 once the
          batch is sent.
        tags: [batches]
        requestBody:
          content:
            application/json:
              schema: PreflightFromAssetIn
            multipart/form-data:
              schema:
                type: object
                required: [zoneId, file]
                properties:
                  zoneId: {type: string}
                  faceIndex: {type: string}
                  file: {type: string, format: binary}
        responses:
          201:
            description: the preflight
            content:
              application/json:
                schema: PreflightAnswerEnvelope
        """
        self._answer_preflight(req, resp, batch_id)

    def on_post_from_asset(self, req, resp, batch_id: str) -> None:
        """Attach a visual of the library to a slot of the batch.
        ---
        summary: Preflight from an existing asset
        tags: [batches]
        requestBody:
          content:
            application/json:
              schema: PreflightFromAssetIn
        responses:
          201:
            description: the preflight
            content:
              application/json:
                schema: PreflightAnswerEnvelope
        """
        self._answer_preflight(req, resp, batch_id)

    def _answer_preflight(self, req, resp, batch_id: str) -> None:
        organization_id, user_id = acting_organization(req, "industrial"), req.context.principal.user_id
        slot = read_preflight(
            req, storage=self.storage, organization_id=organization_id, user_id=user_id,
            max_file_bytes=self.max_file_bytes,
            check_slot=lambda zone_id, face_index: batches.check_batch_preflight_slot(
                batch_id=batch_id, organization_id=organization_id, zone_id=zone_id, face_index=face_index),
        )
        preflight = batches.attach_batch_preflight(
            batch_id=batch_id, organization_id=organization_id, zone_id=slot.zone_id, face_index=slot.face_index,
            asset_id=slot.asset_id, user_id=user_id)
        send(resp, {"preflight": preflight_out(preflight)}, status=201)

    def on_get_preflights(self, req, resp, batch_id: str) -> None:
        """Files attached to the batch.
        ---
        summary: The batch's preflights
        tags: [batches]
        responses:
          200:
            description: "`{preflights}`"
            content:
              application/json:
                schema: PreflightListOutEnvelope
        """
        organization_id = acting_organization(req, "industrial")
        rows = batches.list_batch_preflights(batch_id=batch_id, organization_id=organization_id)
        send(resp, {"preflights": [preflight_out(row) for row in rows]})

    def on_post_preview(self, req, resp, batch_id: str) -> None:
        """Preview the confirmation.
        ---
        summary: The confirmation's classification, split and recap, written nowhere
        description: Same body and same 400s as the confirmation. Under target `store`, a store without a complete
          address is excluded (`missing_address`); under `single_address` and `none` never.
        tags: [batches]
        requestBody:
          content:
            application/json:
              schema: BatchDepositIn
        responses:
          200:
            description: per reservation, exclusions and the recap counters
            content:
              application/json:
                schema: PreviewOutEnvelope
        """
        organization_id = acting_organization(req, "industrial")
        deposit = deposit_from(load(req, BatchDepositIn()))
        send(resp, preview_out(batches.preview_batch(batch_id=batch_id, organization_id=organization_id,
                                                     deposit=deposit)))

    def on_post_confirm(self, req, resp, batch_id: str) -> None:
        """Confirm the batch.
        ---
        summary: One pending order per retained reservation that prints anything; LOT- code; batch sent
        description: >
          In one transaction. 400 VALIDATION_ERROR for a retained reservation absent from `allocations`, a target
          `none` that still prints, a stock above the deliverable population's capacity, and the refusals of the
          single deposit. No order at all (everything reused): the batch is deleted, no code drawn (`deleted`).
          Confirming a sent batch again answers its orders (`replayed`), never a second set.
        tags: [batches]
        requestBody:
          content:
            application/json:
              schema: BatchDepositIn
        responses:
          201:
            description: the orders made (200 when replayed or deleted)
            content:
              application/json:
                schema: ConfirmOutEnvelope
        """
        organization_id = acting_organization(req, "industrial")
        deposit = deposit_from(load(req, BatchDepositIn()))
        outcome = batches.confirm_batch(batch_id=batch_id, organization_id=organization_id, deposit=deposit,
                                        default_printer_organization_id=self.default_printer)
        send(resp, confirm_out(outcome), status=201 if outcome.order_codes and not outcome.replayed else 200)


class IndustrialBatch:
    def on_get(self, req, resp, code: str) -> None:
        """A sent batch, read-only.
        ---
        summary: A sent batch of the organization, with the manifest naming each store
        tags: [batches]
        responses:
          200:
            description: the batch
            content:
              application/json:
                schema: BatchDetailOutEnvelope
        """
        organization_id = acting_organization(req, "industrial")
        send(resp, batch_detail_out(batch_views.industrial_batch_view(batch_code=code,
                                                                      organization_id=organization_id)))


def routes(deps) -> list[Route]:
    groups, batch = CampaignGroups(), Batch(deps)
    return [
        Route(GROUPS, groups, INDUSTRIAL),
        Route(GROUPS + "/{furniture_type_id}/reservations", groups, INDUSTRIAL, suffix="reservations"),
        Route("/api/campaigns/{campaign_id}/print-batches", groups, INDUSTRIAL, suffix="batches"),
        Route("/api/print-batches", Batches(), INDUSTRIAL),
        Route(BATCH, batch, INDUSTRIAL),
        Route(f"{BATCH}/upload/preflight", batch, INDUSTRIAL, suffix="preflight"),
        Route(f"{BATCH}/upload/preflight-from-asset", batch, INDUSTRIAL, suffix="from_asset"),
        Route(f"{BATCH}/upload/preflights", batch, INDUSTRIAL, suffix="preflights"),
        Route(f"{BATCH}/preview", batch, INDUSTRIAL, suffix="preview"),
        Route(f"{BATCH}/confirm", batch, INDUSTRIAL, suffix="confirm"),
        Route("/api/industrial/print-batches/{code}", IndustrialBatch(), INDUSTRIAL),
    ]
