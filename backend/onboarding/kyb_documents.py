"""The three delegation documents of Specification A (point 5), uploaded by the organization.

`POST /api/organizations/{id}/kyb/documents` (multipart `file` and `type`): a PDF, PNG or JPEG
of at most 10 MB, its type read from its first bytes. One current file per type and organization:
a new upload replaces the previous one (`INSERT ... ON CONFLICT (organization_id, document_type)
DO UPDATE`), the blob written before the row that points at it. The KYB approval gate
(`kyb_review.approval_blocker`) asks for all three when the signer is not on the registry extract.

Admins check them before approving: the admin organization detail lists them (`kyb_documents_of`)
and `GET /api/admin/organizations/{id}/kyb/documents/{type}` streams each (`open_kyb_document`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

from backend import clock
from backend.db import transaction
from backend.errors import NotFound, ValidationError
from backend.files import SNIFF_BYTES, detect_content_type
from backend.identity.models import Organization
from backend.identity.organizations import MANAGERS, organization_for, reopen_kyb
from backend.identity.principal import Principal
from backend.onboarding.models import KybDocument, KybDocumentType
from storage import Storage

KYB_DOCUMENTS_CONTEXT = "kyb-documents"
MAX_BYTES = 10 * 1024 * 1024
EXTENSIONS = {"application/pdf": "pdf", "image/png": "png", "image/jpeg": "jpg"}


def upload_kyb_document(*, principal: Principal, organization_id: str, document_type: str | None,
                        content: bytes, storage: Storage) -> KybDocument:
    """Store one delegation document of the organization (a manager, or an admin)."""
    organization = organization_for(principal, organization_id, membership_roles=MANAGERS)
    if document_type not in {t.value for t in KybDocumentType}:
        raise ValidationError("unknown KYB document type", fields={
            "type": [f"must be one of: {', '.join(t.value for t in KybDocumentType)}"]})
    if not content:
        raise ValidationError("the file is missing", fields={"file": ["required"]})
    content_type = detect_content_type(content[:SNIFF_BYTES])
    if content_type not in EXTENSIONS:
        raise ValidationError("the file must be a PDF, PNG or JPEG", fields={"file": ["must be PDF, PNG or JPEG"]})
    folder = organization.id.replace(":", "-")  # storage keys allow no colon
    key = f"{folder}/{document_type}-{uuid.uuid4().hex}.{EXTENSIONS[content_type]}"
    storage.put_bytes(KYB_DOCUMENTS_CONTEXT, key, content, content_type)
    values = {"storage_key": key, "content_type": content_type, "size_bytes": len(content),
              "uploaded_by_user_id": principal.user_id, "uploaded_at": clock.now()}
    with transaction():
        locked = Organization.select().where(Organization.id == organization.id).for_update().get()
        # A new document on an approved organization is new KYB material: the review reopens.
        reopen_kyb(locked, actor_user_id=principal.user_id, reason="kyb_document_uploaded", changed=[document_type])
        KybDocument.insert(organization=organization.id, document_type=document_type, **values).on_conflict(
            conflict_target=[KybDocument.organization, KybDocument.document_type],
            update={getattr(KybDocument, name): value for name, value in values.items()},
        ).execute()
    return KybDocument.get(KybDocument.organization == organization.id, KybDocument.document_type == document_type)


def kyb_documents_of(organization_id: str) -> list[KybDocument]:
    """The organization's current delegation documents, in the order of Specification A."""
    order = {t.value: i for i, t in enumerate(KybDocumentType)}
    documents = KybDocument.select().where(KybDocument.organization == organization_id)
    return sorted(documents, key=lambda d: order[d.document_type])


def open_kyb_document(*, organization_id: str, document_type: str,
                      storage: Storage) -> tuple[KybDocument, str, Iterator[bytes]]:
    """One delegation document for an admin: `(row, filename, chunks)`; NotFound when none is stored."""
    document = KybDocument.get_or_none(KybDocument.organization == organization_id,
                                       KybDocument.document_type == document_type)
    if document is None:
        raise NotFound("no delegation document of this type is stored for the organization", type=document_type)
    filename = f"{document.document_type}.{EXTENSIONS[document.content_type]}"
    return document, filename, storage.open(KYB_DOCUMENTS_CONTEXT, document.storage_key)
