"""`vitrine billing mandate-sha256`: a signed mandate stored before its sha256 was recorded gets
the hash of its stored file, once and audited; its download is then served, and refused again if
the file changes afterwards."""

from __future__ import annotations

import hashlib

from backend import clock
from backend.billing.models import AuditEntry, SelfBillingMandate
from backend.billing.self_billing.mandate_document import STORAGE_CONTEXT
from backend.billing.self_billing.mandate_document import storage_key as mandate_key
from backend.billing.self_billing.mandate_sha256 import ACTION, record_missing_sha256
from backend.runtime import current_runtime
from ops.cli import main
from tests.billing.helpers import approved_org
from tests.factories import add_member, make_user, signed_in

PDF = b"%PDF-1.7\n% a mandate signed before its hash was kept\n%%EOF\n"


def _signed_without_hash(content: bytes | None = PDF) -> tuple[SelfBillingMandate, dict]:
    """A mandate signed as before the hash was recorded: its file stored (unless `content` is
    None), no sha256."""
    distributor = approved_org("distributor")
    member = make_user()
    add_member(member, distributor)
    mandate = SelfBillingMandate.create(organization_id=distributor.id, status="pending_signature",
                                        esign_request_ref=f"req-{distributor.siren}", requested_at=clock.now())
    key = mandate_key(distributor.id, mandate.id)
    if content is not None:
        current_runtime().storage.put_bytes(STORAGE_CONTEXT, key, content, "application/pdf")
    SelfBillingMandate.update(status="signed", signed_at=clock.now(), document_storage_key=key).where(
        SelfBillingMandate.id == mandate.id).execute()
    return SelfBillingMandate.get_by_id(mandate.id), signed_in(member, distributor)


def _download(client, mandate, headers):
    return client.simulate_get(f"/api/billing/organizations/{mandate.organization_id}/self-billing-mandate/document",
                               headers=headers)


def test_the_hash_of_a_stored_file_is_recorded_once_audited_and_the_download_served(client):
    mandate, headers = _signed_without_hash()
    assert _download(client, mandate, headers).status_code == 409  # nothing recorded: refused
    storage = current_runtime().storage

    dry = record_missing_sha256(storage, dry_run=True)
    assert [(o.mandate_id, o.sha256) for o in dry] == [(mandate.id, hashlib.sha256(PDF).hexdigest())]
    assert SelfBillingMandate.get_by_id(mandate.id).document_sha256 is None
    assert not AuditEntry.select().where(AuditEntry.action == ACTION).exists()

    (outcome,) = record_missing_sha256(storage, dry_run=False)
    assert (outcome.mandate_id, outcome.sha256, outcome.problem) == (mandate.id, hashlib.sha256(PDF).hexdigest(), None)
    assert SelfBillingMandate.get_by_id(mandate.id).document_sha256 == hashlib.sha256(PDF).hexdigest()
    (audit,) = AuditEntry.select().where(AuditEntry.action == ACTION)
    assert audit.details == {"mandateId": mandate.id, "organizationId": mandate.organization_id,
                             "storageKey": mandate.document_storage_key, "sha256": outcome.sha256}
    served = _download(client, mandate, headers)
    assert served.status_code == 200 and served.content == PDF

    assert record_missing_sha256(storage, dry_run=False) == []  # once: a second run has nothing to do
    storage.put_bytes(STORAGE_CONTEXT, mandate.document_storage_key, b"%PDF-1.7\n% swapped\n", "application/pdf")
    assert record_missing_sha256(storage, dry_run=False) == []  # a recorded hash is never taken again
    assert _download(client, mandate, headers).status_code == 409


def test_a_missing_or_non_pdf_file_is_reported_and_left_without_a_hash():
    missing, _ = _signed_without_hash(None)
    not_pdf, _ = _signed_without_hash(b"<html>not the signed file</html>")
    outcomes = {o.mandate_id: o for o in record_missing_sha256(current_runtime().storage, dry_run=False)}
    assert outcomes[missing.id].problem == "the stored file is missing"
    assert outcomes[not_pdf.id].problem == "the signed file is not a PDF"
    assert all(outcomes[m.id].sha256 is None for m in (missing, not_pdf))
    assert SelfBillingMandate.select().where(SelfBillingMandate.id.in_([missing.id, not_pdf.id]),
                                             SelfBillingMandate.document_sha256.is_null(False)).count() == 0
    assert not AuditEntry.select().where(AuditEntry.action == ACTION).exists()


def test_the_command_prints_what_it_would_record(capsys):
    assert main(["billing", "mandate-sha256", "--dry-run"]) == 0
    assert "sha256 would be recorded" in capsys.readouterr().out
