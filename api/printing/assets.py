"""The visual library `/api/print-assets` (spec B; shapes decided in docs/printing.md).

Members of the active industrial organization upload (multipart field `file`), list, read,
stream and delete their visuals. The organization comes from the session, and every service
query filters on it: another organization's asset answers 404.
"""

from __future__ import annotations

from api.access import INDUSTRIAL, Route
from api.operations import operation
from api.requests import MULTIPART_ALLOWANCE, acting_organization, multipart_file
from backend.files import ACCEPTED_TYPES
from backend.listing import ListParams
from backend.printing import assets
from schemas.common import page_of
from schemas.printing.assets import PrintAssetDeletedOut, PrintAssetListQuery, PrintAssetOut, PrintAssetUpload

BASE = "/api/print-assets"


class PrintAssets:
    def __init__(self, deps) -> None:
        self.storage = deps.storage
        self.max_file_bytes = deps.config.print_asset_max_bytes
        self.max_body_bytes = self.max_file_bytes + MULTIPART_ALLOWANCE

    @operation(
        "Upload a visual to the organization's library (PDF, PNG, JPEG or TIFF)",
        description=(
            "The type is detected from the content; anything else is a VALIDATION_ERROR. A file over "
            "PRINT_ASSET_MAX_BYTES (default 200 MB) is refused with 413 PAYLOAD_TOO_LARGE and nothing "
            "is kept. The file is streamed to storage, never held whole in memory."
        ),
        tags=("print-assets",),
        upload=PrintAssetUpload,
        answer=PrintAssetOut,
        answer_description="the stored visual",
        status=201,
    )
    def on_post(self, req, resp):
        organization_id, user_id = acting_organization(req, "industrial"), req.context.principal.user_id
        _, part = multipart_file(req)
        return assets.upload_asset(storage=self.storage, organization_id=organization_id, user_id=user_id,
                                   original_name=part.filename, stream=part.stream, max_bytes=self.max_file_bytes)

    @operation(
        "The organization's visuals, server-paginated",
        tags=("print-assets",),
        query=PrintAssetListQuery,
        answer=page_of(PrintAssetOut),
        answer_description="a page of visuals",
    )
    def on_get(self, req, resp, query: dict):
        organization_id = acting_organization(req, "industrial")
        return assets.list_assets(organization_id=organization_id, params=ListParams.from_query(query))


class PrintAsset:
    def __init__(self, deps) -> None:
        self.storage = deps.storage

    @operation(
        "A visual of the organization's library",
        tags=("print-assets",),
        answer=PrintAssetOut,
        answer_description="the visual",
    )
    def on_get(self, req, resp, asset_id: str):
        organization_id = acting_organization(req, "industrial")
        return assets.get_asset(organization_id=organization_id, asset_id=asset_id)

    @operation(
        "Delete an unused visual",
        description="409 CONFLICT while a print order line references it.",
        tags=("print-assets",),
        answer=PrintAssetDeletedOut,
        answer_description="the visual is deleted",
    )
    def on_delete(self, req, resp, asset_id: str) -> dict:
        organization_id = acting_organization(req, "industrial")
        assets.delete_asset(storage=self.storage, organization_id=organization_id, asset_id=asset_id)
        return {"id": asset_id, "deleted": True}

    @operation(
        "Stream a visual's content",
        tags=("print-assets",),
        produces=tuple(ACCEPTED_TYPES),
        answer_description="the file, raw, with its detected Content-Type",
    )
    def on_get_content(self, req, resp, asset_id: str) -> None:
        organization_id = acting_organization(req, "industrial")
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
        Route(BASE, PrintAssets(deps), INDUSTRIAL),
        Route(f"{BASE}/{{asset_id}}", item, INDUSTRIAL),
        Route(f"{BASE}/{{asset_id}}/content", item, INDUSTRIAL, suffix="content"),
    ]
