"""Self-billing mandate request and answer shapes (Specification C "Self-billing mandate")."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend.billing.models import SelfBillingMandateStatus
from schemas.common import UtcDateTime

ADMIN_ONLY = "admins only"


class MandateSignerOut(Schema):
    firstName = fields.String(required=True)
    lastName = fields.String(required=True)
    email = fields.String(required=True)
    phone = fields.String(allow_none=True)


class MandateOut(Schema):
    status = fields.String(required=True, metadata={"enum": [s.value for s in SelfBillingMandateStatus]})
    documentAvailable = fields.Boolean(required=True, metadata={"description": "the signed PDF is stored"})
    createdAt = UtcDateTime(required=True)
    requestedAt = UtcDateTime(allow_none=True, required=True)
    signedAt = UtcDateTime(allow_none=True, required=True)
    declinedAt = UtcDateTime(allow_none=True, required=True)
    revokedAt = UtcDateTime(allow_none=True, required=True)
    id = fields.String(metadata={"description": ADMIN_ONLY})
    organizationId = fields.String(metadata={"description": ADMIN_ONLY})
    signatureLevel = fields.String(metadata={"description": ADMIN_ONLY})
    esignRequestRef = fields.String(allow_none=True, metadata={"description": f"{ADMIN_ONLY}: the provider's id"})
    documentStorageKey = fields.String(allow_none=True, metadata={"description": ADMIN_ONLY})
    signer = fields.Nested(MandateSignerOut, metadata={"description": ADMIN_ONLY})
    declineReason = fields.String(allow_none=True, metadata={"description": f"{ADMIN_ONLY}: the provider event"})
    revokeReason = fields.String(allow_none=True, metadata={"description": ADMIN_ONLY})
    requestedByUserId = fields.String(allow_none=True, metadata={"description": ADMIN_ONLY})
    revokedByUserId = fields.String(allow_none=True, metadata={"description": ADMIN_ONLY})


class MandateAnswer(Schema):
    mandate = fields.Nested(MandateOut, required=True)


class MandateRequestedAnswer(MandateAnswer):
    signatureLink = fields.String(allow_none=True, required=True,
                                  metadata={"description": "the signer's page at the provider, when it gives one"})


class MandateRevokeIn(Schema):
    reason = fields.String(required=True, validate=validate.Length(min=1, max=2000))
