"""Billing's stable error codes beyond the common ones (`api/errors.py` maps them to statuses)."""

from __future__ import annotations

from backend.errors import Conflict, DomainError, NotFound


class IdempotencyKeyReused(DomainError):
    """422: the same `Idempotency-Key` with another request body."""

    code = "IDEMPOTENCY_KEY_REUSED"


class BillingPdfNotReady(NotFound):
    """404: the document's PDF is not stored yet."""

    code = "BILLING_PDF_NOT_READY"


class DocumentIntegrityFailed(Conflict):
    """409: a stored document's bytes are not the ones recorded (sha256) when it was stored; it is
    not served."""

    code = "DOCUMENT_INTEGRITY_FAILED"


class EsignProviderFailed(DomainError):
    """502: the e-signature provider failed a synchronous call (the self-billing mandate request)."""

    code = "ESIGN_PROVIDER_FAILED"


class BillingMandateMissing(Conflict):
    """409: self-billing without a signed self-billing mandate."""

    code = "BILLING_MANDATE_MISSING"


class IncidentWindowClosed(DomainError):
    """422: an incident declared outside its window (`details.reason`: `not_started`, `window_closed`)."""

    code = "INCIDENT_WINDOW_CLOSED"
