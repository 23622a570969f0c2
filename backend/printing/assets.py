"""The visual library (`/api/print-assets`): an organization's uploaded visuals, shared by single
and batch deposits.

Every function takes the caller's organization and filters on it in the query: another
organization's asset is NOT_FOUND, exactly like an unknown one. Uploads are copied chunk by
chunk into object storage (never whole in memory), the blob before the row: a failure between
the two leaves an orphan blob, never a row pointing at nothing.

Deleting an asset is a soft delete (the row stays as the record of what was uploaded, by whom,
with which checksum) refused while a preflight or an order line references it; the blob goes once the
deletion commits. Deposit code attaching an asset to a line must lock it `FOR SHARE` with
`deleted_at IS NULL`, so a deletion and an attachment never both win.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import BinaryIO

from peewee import fn

from backend import clock
from backend.db import on_commit, transaction
from backend.errors import Conflict, NotFound, PayloadTooLarge
from backend.files import SNIFF_BYTES, detect_content_type
from backend.listing import ListParams, Page, paginate
from backend.logs import get_logger
from backend.model import new_id
from backend.printing import quota
from backend.printing.files import PRINT_ASSETS_CONTEXT, technical_name
from backend.printing.models import PrintAsset, PrintOrderLine, PrintPreflight
from storage import Storage, StorageError
from storage.base import TooLarge

log = get_logger("printing")

ORIGINAL_NAME_MAX_LENGTH = 255
_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _read_full(stream: BinaryIO, n: int) -> bytes:
    """Up to `n` bytes, fewer only at the end: sockets and multipart parts may return short reads."""
    parts, missing = [], n
    while missing > 0 and (chunk := stream.read(missing)):
        parts.append(chunk)
        missing -= len(chunk)
    return b"".join(parts)


class _Prefixed:
    """`head` (already read to detect the type) followed by the rest of `stream`.

    `read(n)` gives n bytes until the end, as resumable uploads (GCS) take a short read for the
    end of the stream."""

    def __init__(self, head: bytes, stream: BinaryIO) -> None:
        self.head, self.stream = head, stream

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            data, self.head = self.head + self.stream.read(), b""
            return data
        if len(self.head) >= n:
            data, self.head = self.head[:n], self.head[n:]
            return data
        data, self.head = self.head, b""
        return data + _read_full(self.stream, n - len(data))


def _storage_key(organization_id: str, asset_id: str) -> str:
    # Organization ids hold a colon (`industrial:552100554`), which storage keys do not allow.
    return f"{_KEY_UNSAFE.sub('_', organization_id)}/{asset_id}"


def _displayable(name: str) -> str:
    # Control characters (NUL above all, which PostgreSQL text refuses) are never part of a name.
    return "".join(c for c in name if unicodedata.category(c) != "Cc").strip()


def upload_asset(
    *,
    storage: Storage,
    organization_id: str,
    user_id: str,
    original_name: str | None,
    stream: BinaryIO,
    max_bytes: int,
) -> PrintAsset:
    """Store a visual: type told from its first bytes (VALIDATION_ERROR unless PDF, PNG, JPEG or
    TIFF), PAYLOAD_TOO_LARGE past `max_bytes` or past the organization's upload quota (nothing
    kept, no row)."""
    head = _read_full(stream, SNIFF_BYTES)
    content_type = detect_content_type(head)
    asset_id = new_id()
    name = technical_name(original_name or "", content_type)
    key = _storage_key(organization_id, asset_id)
    limit = quota.configured_quota()
    room = quota.room_left(organization_id, limit)
    try:
        stored = storage.put_stream(
            PRINT_ASSETS_CONTEXT, key, _Prefixed(head, stream), content_type, max_bytes=min(max_bytes, room)
        )
    except TooLarge:
        if room < max_bytes:
            raise quota.quota_exceeded(limit) from None
        raise PayloadTooLarge(f"the file exceeds {max_bytes} bytes", limitBytes=max_bytes) from None
    try:
        with transaction():
            quota.lock_and_check(organization_id, stored.size, limit)
            return PrintAsset.create(
                id=asset_id,
                organization_id=organization_id,
                uploaded_by_user_id=user_id,
                original_name=_displayable(original_name or "")[:ORIGINAL_NAME_MAX_LENGTH] or name,
                technical_name=name,
                content_type=content_type,
                size_bytes=stored.size,
                sha256=stored.sha256,
                crc32=stored.crc32,
                storage_key=key,
                created_at=clock.now(),
            )
    except PayloadTooLarge:
        storage.delete(PRINT_ASSETS_CONTEXT, key)  # a concurrent upload took the room: nothing kept
        raise


def _live(organization_id: str):
    return PrintAsset.select().where(PrintAsset.organization_id == organization_id, PrintAsset.deleted_at.is_null())


SORTS = {
    "createdAt": PrintAsset.created_at,
    "originalName": fn.lower(PrintAsset.original_name),  # people sort names without case
    "sizeBytes": PrintAsset.size_bytes,
}


def list_assets(*, organization_id: str, params: ListParams) -> Page:
    """A page of the organization's live assets (API.md Lists); `search` matches the original
    name, case-insensitively."""
    return paginate(
        _live(organization_id),
        params,
        sorts=SORTS,
        default_sort="createdAt",
        tiebreaker=PrintAsset.id,
        search_columns=(PrintAsset.original_name,),
    )


def get_asset(*, organization_id: str, asset_id: str) -> PrintAsset:
    asset = _live(organization_id).where(PrintAsset.id == asset_id).first()
    if asset is None:
        raise NotFound("print asset not found")
    return asset


def open_asset_content(*, storage: Storage, organization_id: str, asset_id: str) -> tuple[PrintAsset, Iterator[bytes]]:
    """The asset and its bytes in chunks, to stream."""
    asset = get_asset(organization_id=organization_id, asset_id=asset_id)
    return asset, storage.open(PRINT_ASSETS_CONTEXT, asset.storage_key)


def delete_asset(*, storage: Storage, organization_id: str, asset_id: str) -> None:
    """Soft-delete an unused asset (CONFLICT while a preflight or a print order line references it)."""
    with transaction():
        asset = _live(organization_id).where(PrintAsset.id == asset_id).for_update().first()
        if asset is None:
            raise NotFound("print asset not found")
        in_use = (PrintOrderLine.select().where(PrintOrderLine.asset_id == asset.id).exists()
                  or PrintPreflight.select().where(PrintPreflight.asset_id == asset.id).exists())
        if in_use:
            raise Conflict("the visual is used by a deposit or a print order", reason="asset_in_use")
        asset.deleted_at = clock.now()
        asset.save(only=[PrintAsset.deleted_at])
        on_commit(lambda: _delete_blob(storage, asset.storage_key))


def _delete_blob(storage: Storage, key: str) -> None:
    try:
        storage.delete(PRINT_ASSETS_CONTEXT, key)
    except StorageError as exc:  # the deletion is committed; a leftover blob is harmless
        log.warning("print asset blob not deleted", extra={"fields": {"storageKey": key, "error": str(exc)}})
