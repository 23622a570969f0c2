"""Billing's stable error codes beyond the common ones (`api/errors.py` maps them to statuses)."""

from __future__ import annotations

from backend.errors import DomainError, NotFound


class IdempotencyKeyReused(DomainError):
    """422: the same `Idempotency-Key` with another request body."""

    code = "IDEMPOTENCY_KEY_REUSED"


class BillingPdfNotReady(NotFound):
    """404: the document's PDF is not stored yet."""

    code = "BILLING_PDF_NOT_READY"


class EsignProviderFailed(DomainError):
    """502: the e-signature provider failed a synchronous call (the self-billing mandate request)."""

    code = "ESIGN_PROVIDER_FAILED"
