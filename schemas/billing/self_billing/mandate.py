"""Self-billing mandate request and answer shapes (Specification C "Self-billing mandate")."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend.billing.models import SelfBillingMandateStatus
from schemas.common import UtcDateTime

ADMIN_ONLY = "admins only"


class MandateSignerOut(Schema):
    """The signer as stored on the mandate (its JSON keys are the API's)."""

    firstName = fields.String(required=True)
    lastName = fields.String(required=True)
    email = fields.String(required=True)
    phone = fields.String(allow_none=True)


class MandateOut(Schema):
    """What every reader of the mandate sees (`backend.billing.self_billing.mandate.PublicMandate`)."""

    status = fields.String(required=True, metadata={"enum": [s.value for s in SelfBillingMandateStatus]})
    documentAvailable = fields.Boolean(attribute="document_available", required=True,
                                       metadata={"description": "the signed PDF is stored"})
    createdAt = UtcDateTime(attribute="created_at", required=True)
    requestedAt = UtcDateTime(attribute="requested_at", allow_none=True, required=True)
    signedAt = UtcDateTime(attribute="signed_at", allow_none=True, required=True)
    declinedAt = UtcDateTime(attribute="declined_at", allow_none=True, required=True)
    revokedAt = UtcDateTime(attribute="revoked_at", allow_none=True, required=True)


class MandateAdminOut(MandateOut):
    """The admin-only fields on top: an admin reads the whole mandate row."""

    id = fields.String(metadata={"description": ADMIN_ONLY})
    organizationId = fields.String(attribute="organization_id", metadata={"description": ADMIN_ONLY})
    signatureLevel = fields.String(attribute="signature_level", metadata={"description": ADMIN_ONLY})
    esignRequestRef = fields.String(attribute="esign_request_ref", allow_none=True,
                                    metadata={"description": f"{ADMIN_ONLY}: the provider's id"})
    documentStorageKey = fields.String(attribute="document_storage_key", allow_none=True,
                                       metadata={"description": ADMIN_ONLY})
    signer = fields.Nested(MandateSignerOut, metadata={"description": ADMIN_ONLY})
    declineReason = fields.String(attribute="decline_reason", allow_none=True,
                                  metadata={"description": f"{ADMIN_ONLY}: the provider event"})
    revokeReason = fields.String(attribute="revoke_reason", allow_none=True, metadata={"description": ADMIN_ONLY})
    requestedByUserId = fields.String(attribute="requested_by_user_id", allow_none=True,
                                      metadata={"description": ADMIN_ONLY})
    revokedByUserId = fields.String(attribute="revoked_by_user_id", allow_none=True,
                                    metadata={"description": ADMIN_ONLY})


class MandateAnswer(Schema):
    """A member sees `MandateOut`'s fields, an admin `MandateAdminOut`'s: what the mandate view
    given holds (`mandate_view`) is what is written."""

    mandate = fields.Nested(MandateAdminOut, required=True)


class MandateRequestedAnswer(MandateAnswer):
    signatureLink = fields.String(allow_none=True, required=True,
                                  metadata={"description": "the signer's page at the provider, when it gives one"})


class MandateRevokeIn(Schema):
    reason = fields.String(required=True, validate=validate.Length(min=1, max=2000))
