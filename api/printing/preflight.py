"""Reading a preflight request, shared by the single-deposit and the batch routes.

JSON names a visual of the library (`PreflightFromAssetIn`, loaded by the operation's
declaration); multipart (`PreflightUpload`) carries `zoneId`, `faceIndex`, then the `file`, which
goes to the library once the caller's `check_slot` has accepted the slot (so a refused slot
stores nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from api.requests import multipart_file
from backend.errors import ValidationError
from backend.printing import assets


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
