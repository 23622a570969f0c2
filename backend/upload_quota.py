"""The per-organization upload quota (`UPLOAD_QUOTA_BYTES`, default 10 GiB): what an organization
keeps in storage (its live print assets and its KYB documents) may not grow past it.

An upload streams with at most the room left as its limit, then the stored size is checked again
under a per-organization lock before its row is written, so two concurrent uploads cannot both
take the last gigabyte. Past the quota: 413 PAYLOAD_TOO_LARGE, `details.reason = upload_quota_exceeded`.
"""

from __future__ import annotations

from peewee import fn

from backend.db import database
from backend.errors import PayloadTooLarge

DEFAULT_QUOTA_BYTES = 10 * 1024**3


def used_bytes(organization_id: str) -> int:
    from backend.onboarding.models import KybDocument
    from backend.printing.models import PrintAsset

    assets = PrintAsset.select(fn.COALESCE(fn.SUM(PrintAsset.size_bytes), 0)).where(
        PrintAsset.organization_id == organization_id, PrintAsset.deleted_at.is_null()).scalar()
    documents = KybDocument.select(fn.COALESCE(fn.SUM(KybDocument.size_bytes), 0)).where(
        KybDocument.organization == organization_id).scalar()
    return int(assets) + int(documents)


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


def configured_quota() -> int:
    from backend.runtime import current_runtime

    runtime = current_runtime()
    return runtime.config.upload_quota_bytes if runtime is not None else DEFAULT_QUOTA_BYTES
