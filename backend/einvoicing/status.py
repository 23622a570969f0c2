"""The vocabularies of a transmission (Specification C, "E-invoice transmission")."""

from __future__ import annotations

from enum import StrEnum


class TransmissionStatus(StrEnum):
    PENDING_DISPATCH = "pending_dispatch"
    DISPATCHING = "dispatching"
    SENT = "sent"  # the operator holds the flow; providerStatus `processing`
    ACKNOWLEDGED = "acknowledged"
    REJECTED = "rejected"
    FAILED = "failed"
    CANCELLED = "cancelled"


TERMINAL = frozenset({TransmissionStatus.ACKNOWLEDGED, TransmissionStatus.REJECTED, TransmissionStatus.CANCELLED})
# Where an admin retry starts (spec C, runbook).
RETRYABLE = (TransmissionStatus.FAILED, TransmissionStatus.PENDING_DISPATCH)


class ProviderStatus(StrEnum):
    PROCESSING = "processing"
    ACCEPTED = "accepted"
    REJECTED = "rejected"


class FlowType(StrEnum):
    FR_DOMESTIC_B2B = "fr_domestic_b2b"  # structured transmission mandatory
    EU_INTRA_B2B = "eu_intra_b2b"  # e-reporting: no transmission
    EXPORT_B2B = "export_b2b"  # e-reporting: no transmission


class DocumentKind(StrEnum):
    INVOICE = "invoice"
    CREDIT_NOTE = "credit_note"


class OperatorStatus(StrEnum):
    """Flow statuses the operator answers; anything else is "unknown" and never moves `sent`."""

    PENDING = "Pending"
    OK = "Ok"
    ERROR = "Error"
    ARCHIVED = "Archived"
