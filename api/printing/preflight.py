"""The preflight routes, shared by the single deposit and the batch: `POST .../upload/preflight`
(a new file, or an asset of the library) and `POST .../upload/preflight-from-asset`.

JSON names a visual of the library (`PreflightFromAssetIn`, loaded by the operation's
declaration); multipart (`PreflightUpload`) carries `zoneId`, `faceIndex`, then the `file`, which
goes to the library once the caller's `check_slot` has accepted the slot (so a refused slot
stores nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from api.operations import operation
from api.requests import MULTIPART_ALLOWANCE, acting_organization, multipart_file
from backend.errors import ValidationError
from backend.printing import assets
from schemas.printing.deposits import PreflightAnswer, PreflightFromAssetIn, PreflightUpload


class PreflightSlot(NamedTuple):
    zone_id: str
    face_index: int | None
    asset_id: str


def face_index_text(text: str | None) -> int | None:
    if text in (None, "", "null"):
        return None
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ValidationError("faceIndex must be a face number or empty",
                              fields={"faceIndex": ["an integer from 0, or empty for the whole zone"]})
    return value


def read_preflight(req, body: dict | None, *, storage, organization_id: str, user_id: str, max_file_bytes: int,
                   check_slot: Callable[[str, int | None], None]) -> PreflightSlot:
    """The slot and the visual of a preflight request: the JSON `body`, or (None) the multipart
    parts, whose file is stored in the library after `check_slot(zone_id, face_index)` has
    accepted the slot."""
    if body is not None:
        return PreflightSlot(body["zoneId"], body["faceIndex"], body["assetId"])
    texts, part = multipart_file(req, ("zoneId", "faceIndex"))
    zone_id, face_index = texts.get("zoneId") or "", face_index_text(texts.get("faceIndex"))
    if not zone_id:
        raise ValidationError("zoneId is required before the file", fields={"zoneId": ["required"]})
    check_slot(zone_id, face_index)
    asset = assets.upload_asset(storage=storage, organization_id=organization_id, user_id=user_id,
                                original_name=part.filename, stream=part.stream, max_bytes=max_file_bytes)
    return PreflightSlot(zone_id, face_index, asset.id)


class PreflightResource:
    """The two preflight responders of a deposit or a batch; a subclass names the slot check and
    the attachment of its target (the route's `reservation_id` or `batch_id`, passed as keywords)."""

    def __init__(self, deps) -> None:
        self.storage = deps.storage
        self.max_file_bytes = deps.config.print_asset_max_bytes
        self.max_body_bytes = self.max_file_bytes + MULTIPART_ALLOWANCE

    def check_slot(self, *, organization_id: str, zone_id: str, face_index: int | None, **target: str) -> None:
        raise NotImplementedError

    def attach(self, *, organization_id: str, user_id: str, slot: PreflightSlot, **target: str):
        raise NotImplementedError

    @operation("Attach a visual to (zoneId, faceIndex); a new file (multipart) or an existing asset (JSON)",
               description="multipart/form-data: parts `zoneId`, `faceIndex` (empty for the whole zone), then "
                           "`file` (uploaded to the library, same checks as POST /api/print-assets). "
                           "application/json: PreflightFromAssetIn. A slot that already holds a file gets the new "
                           "one; a whole-zone file replaces the zone's per-face files and the other way round. "
                           "409 CONFLICT once the deposit is closed or the batch sent.",
               tags=("preflights",), body=PreflightFromAssetIn, upload=PreflightUpload, answer=PreflightAnswer,
               status=201, answer_description="the preflight")
    def on_post_preflight(self, req, resp, body: dict | None, **target: str) -> dict:
        return self._attach(req, body, target)

    @operation("Preflight from an existing asset (the JSON form of POST .../upload/preflight)",
               description="Attach a visual of the library to a slot.", tags=("preflights",),
               body=PreflightFromAssetIn, answer=PreflightAnswer, status=201, answer_description="the preflight")
    def on_post_from_asset(self, req, resp, body: dict, **target: str) -> dict:
        return self._attach(req, body, target)

    def _attach(self, req, body: dict | None, target: dict[str, str]) -> dict:
        organization_id, user_id = acting_organization(req, "industrial"), req.context.principal.user_id
        slot = read_preflight(
            req, body, storage=self.storage, organization_id=organization_id, user_id=user_id,
            max_file_bytes=self.max_file_bytes,
            check_slot=lambda zone_id, face_index: self.check_slot(
                organization_id=organization_id, zone_id=zone_id, face_index=face_index, **target),
        )
        return {"preflight": self.attach(organization_id=organization_id, user_id=user_id, slot=slot, **target)}
