"""The visual library `/api/print-assets` (spec B; shapes decided in docs/printing.md).

Members of the active industrial organization upload (multipart field `file`), list, read,
stream and delete their visuals. The organization comes from the session, and every service
query filters on it: another organization's asset answers 404.
"""

from __future__ import annotations

import falcon

from api.access import roles
from api.responses import send
from api.routes import Route
from backend.clock import iso
from backend.errors import Forbidden, ValidationError
from backend.listing import ListParams
from backend.printing import assets, models
from schemas.printing import PrintAssetListQuery

BASE = "/api/print-assets"
ACCESS = roles("industrial", kyb_required=True)

# Multipart framing (boundaries, part headers) around the file itself: the storage enforces the
# exact file limit, this margin only keeps BodyLimit from refusing a file right at the limit.
MULTIPART_ALLOWANCE = 64 * 1024


def _organization(req) -> tuple[str, str]:
    """(industrial organization id, user id) of the caller."""
    principal = req.context.principal
    organization_id = principal.active_organization_id
    if not organization_id or not organization_id.startswith("industrial:"):
        raise Forbidden("an industrial organization must be active", reason="industrial_organization_required")
    return organization_id, principal.user_id


def asset_out(asset: models.PrintAsset) -> dict:
    return {
        "id": asset.id,
        "originalName": asset.original_name,
        "technicalName": asset.technical_name,
        "contentType": asset.content_type,
        "sizeBytes": asset.size_bytes,
        "sha256": asset.sha256,
        "uploadedByUserId": asset.uploaded_by_user_id,
        "createdAt": iso(asset.created_at),
        "contentUrl": f"{BASE}/{asset.id}/content",
    }


def _file_part(req: falcon.Request):
    """The `file` part of a multipart body, its stream not read yet."""
    if not (req.content_type or "").lower().startswith(falcon.MEDIA_MULTIPART):
        raise falcon.HTTPUnsupportedMediaType(description="send multipart/form-data with a `file` part")
    for part in req.get_media():
        if part.name == "file":
            return part
    raise ValidationError("the file is missing", fields={"file": ["required"]})


class PrintAssets:
    def __init__(self, deps) -> None:
        self.storage = deps.storage
        self.max_file_bytes = deps.config.print_asset_max_bytes
        self.max_body_bytes = self.max_file_bytes + MULTIPART_ALLOWANCE

    def on_post(self, req, resp) -> None:
        """Upload a visual.
        ---
        summary: Upload a visual to the organization's library (PDF, PNG, JPEG or TIFF)
        description: >
          The type is detected from the content; anything else is a VALIDATION_ERROR. A file over
          PRINT_ASSET_MAX_BYTES (default 200 MB) is refused with 413 PAYLOAD_TOO_LARGE and nothing
          is kept. The file is streamed to storage, never held whole in memory.
        tags: [print-assets]
        requestBody:
          required: true
          content:
            multipart/form-data:
              schema:
                type: object
                required: [file]
                properties:
                  file:
                    type: string
                    format: binary
        responses:
          201:
            description: the stored visual
            content:
              application/json:
                schema: PrintAssetEnvelope
        """
        organization_id, user_id = _organization(req)
        part = _file_part(req)
        asset = assets.upload_asset(
            storage=self.storage,
            organization_id=organization_id,
            user_id=user_id,
            original_name=part.filename,
            stream=part.stream,
            max_bytes=self.max_file_bytes,
        )
        send(resp, asset_out(asset), status=201)

    def on_get(self, req, resp) -> None:
        """List the library.
        ---
        summary: The organization's visuals, server-paginated
        tags: [print-assets]
        parameters:
          - in: query
            schema: PrintAssetListQuery
        responses:
          200:
            description: a page of visuals
            content:
              application/json:
                schema: PrintAssetPageEnvelope
        """
        organization_id, _ = _organization(req)
        params = ListParams.from_query(PrintAssetListQuery().load(req.params))
        send(resp, assets.list_assets(organization_id=organization_id, params=params).as_dict(asset_out))


class PrintAsset:
    def __init__(self, deps) -> None:
        self.storage = deps.storage

    def on_get(self, req, resp, asset_id: str) -> None:
        """One visual.
        ---
        summary: A visual of the organization's library
        tags: [print-assets]
        responses:
          200:
            description: the visual
            content:
              application/json:
                schema: PrintAssetEnvelope
        """
        organization_id, _ = _organization(req)
        send(resp, asset_out(assets.get_asset(organization_id=organization_id, asset_id=asset_id)))

    def on_delete(self, req, resp, asset_id: str) -> None:
        """Delete a visual.
        ---
        summary: Delete an unused visual
        description: 409 CONFLICT while a print order line references it.
        tags: [print-assets]
        responses:
          200:
            description: the visual is deleted
            content:
              application/json:
                schema: PrintAssetDeletedEnvelope
        """
        organization_id, _ = _organization(req)
        assets.delete_asset(storage=self.storage, organization_id=organization_id, asset_id=asset_id)
        send(resp, {"id": asset_id, "deleted": True})

    def on_get_content(self, req, resp, asset_id: str) -> None:
        """The visual's bytes.
        ---
        summary: Stream a visual's content
        tags: [print-assets]
        responses:
          200:
            description: the file, raw, with its detected Content-Type
            content:
              application/octet-stream:
                schema:
                  type: string
                  format: binary
        """
        organization_id, _ = _organization(req)
        asset, chunks = assets.open_asset_content(
            storage=self.storage, organization_id=organization_id, asset_id=asset_id
        )
        resp.content_type = asset.content_type
        resp.content_length = asset.size_bytes
        resp.downloadable_as = asset.technical_name
        resp.set_header("X-Content-Type-Options", "nosniff")
        resp.set_header("Cache-Control", "private, no-store")
        resp.stream = chunks


def routes(deps) -> list[Route]:
    item = PrintAsset(deps)
    return [
        Route(BASE, PrintAssets(deps), ACCESS),
        Route(f"{BASE}/{{asset_id}}", item, ACCESS),
        Route(f"{BASE}/{{asset_id}}/content", item, ACCESS, suffix="content"),
    ]
