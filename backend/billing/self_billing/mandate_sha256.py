"""The sha256 of the signed mandates stored before it was recorded (`vitrine billing mandate-sha256`).

A signed self-billing mandate's file is served only when its bytes hash to the sha256 recorded at
signature (docs/operations.md, "Database roles"); a mandate signed before that hash was kept
has none, so its download is refused. This one-off pass reads each such stored file and records
its hash, once: the update matches only a row still without one, and the database keeps a
recorded hash as it is (set once). It trusts the file as stored at the time it runs, so it is run
once, right after the upgrade, and each recorded hash is in the billing audit trail
(`billing.self_billing_mandate.sha256_recorded`: the mandate, its storage key, the hash) for a
later comparison with the provider's copy. A file missing, or not a PDF, is reported and left
without a hash: its download stays refused until an admin looks at it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from backend.billing.models import AuditEntry, SelfBillingMandate
from backend.billing.self_billing.mandate_document import STORAGE_CONTEXT, pdf_problem
from backend.context import current_request_id
from backend.db import transaction
from backend.logs import log_event
from storage import Storage

ACTION = "billing.self_billing_mandate.sha256_recorded"


@dataclass(frozen=True)
class Outcome:
    """One mandate of the pass: `recorded` (the hash), or `skipped` and why."""

    mandate_id: str
    storage_key: str
    sha256: str | None
    problem: str | None = None


def _without_hash() -> list[SelfBillingMandate]:
    return list(SelfBillingMandate.select().where(SelfBillingMandate.document_storage_key.is_null(False),
                                                  SelfBillingMandate.document_sha256.is_null())
                .order_by(SelfBillingMandate.created_at, SelfBillingMandate.id))


def _stored_hash(storage: Storage, key: str) -> tuple[str | None, str | None]:
    """(sha256, None) of the stored file, or (None, why it cannot be recorded)."""
    if not storage.exists(STORAGE_CONTEXT, key):
        return None, "the stored file is missing"
    content = storage.read_bytes(STORAGE_CONTEXT, key)
    problem = pdf_problem(content)
    return (None, problem) if problem else (hashlib.sha256(content).hexdigest(), None)


def record_missing_sha256(storage: Storage, *, dry_run: bool) -> list[Outcome]:
    """Every stored mandate file without a recorded sha256: its hash recorded and audited (each in
    its own transaction), or the reason it is not; `dry_run` reports the same and writes nothing."""
    outcomes = []
    for mandate in _without_hash():
        key = mandate.document_storage_key
        sha256, problem = _stored_hash(storage, key)
        if sha256 is not None and not dry_run:
            with transaction():
                recorded = (SelfBillingMandate.update(document_sha256=sha256)
                            .where(SelfBillingMandate.id == mandate.id, SelfBillingMandate.document_sha256.is_null())
                            .execute())
                if not recorded:  # another run recorded it meanwhile
                    continue
                AuditEntry.create(action=ACTION, reason="sha256 of a mandate signed before it was recorded",
                                  details={"mandateId": mandate.id, "organizationId": mandate.organization_id,
                                           "storageKey": key, "sha256": sha256},
                                  request_id=current_request_id())
        outcomes.append(Outcome(mandate.id, key, sha256, problem))
        if problem is not None:
            log_event("billing.self_billing_mandate.sha256_not_recorded", "a signed mandate's stored file"
                      " cannot be hashed: no sha256 recorded", "warn", mandateId=mandate.id, storageKey=key,
                      problem=problem)
        elif not dry_run:
            log_event(ACTION, "signed mandate's sha256 recorded", mandateId=mandate.id, storageKey=key, sha256=sha256)
    return outcomes
