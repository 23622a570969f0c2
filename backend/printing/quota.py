"""The per-organization upload quota (`UPLOAD_QUOTA_BYTES`, docs/operations.md): the live visuals an
organization keeps in its library may not grow past it (KYB documents are not counted: a few
small files, replaced rather than added).

An upload streams with at most the room left as its limit, then the stored size is checked again
under a per-organization lock before its row is written, so two concurrent uploads cannot both
take the last gigabyte. Past the quota: 413 PAYLOAD_TOO_LARGE, `details.reason: upload_quota_exceeded`.
The quota is a process setting `backend.runtime.boot` applies (`use_quota`).
"""

from __future__ import annotations

from peewee import fn

from backend.db import database
from backend.errors import PayloadTooLarge
from backend.printing.models import PrintAsset

DEFAULT_QUOTA_BYTES = 10 * 1024**3
_quota = {"bytes": DEFAULT_QUOTA_BYTES}


def use_quota(quota_bytes: int) -> None:
    _quota["bytes"] = quota_bytes


def configured_quota() -> int:
    return _quota["bytes"]


def used_bytes(organization_id: str) -> int:
    return int(PrintAsset.select(fn.COALESCE(fn.SUM(PrintAsset.size_bytes), 0)).where(
        PrintAsset.organization_id == organization_id, PrintAsset.deleted_at.is_null()).scalar())


def quota_exceeded(quota_bytes: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"the organization's storage quota of {quota_bytes} bytes is used up",
                           reason="upload_quota_exceeded", quotaBytes=quota_bytes)


def room_left(organization_id: str, quota_bytes: int) -> int:
    """Bytes the organization may still upload (413 when none)."""
    room = quota_bytes - used_bytes(organization_id)
    if room <= 0:
        raise quota_exceeded(quota_bytes)
    return room


def lock_and_check(organization_id: str, incoming_bytes: int, quota_bytes: int) -> None:
    """Inside the transaction that records an upload: serialize the organization's uploads and
    refuse one that would take it past the quota."""
    database.execute_sql("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"upload-quota:{organization_id}",))
    if used_bytes(organization_id) + incoming_bytes > quota_bytes:
        raise quota_exceeded(quota_bytes)
