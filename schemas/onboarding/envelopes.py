"""Onboarding schemas: the provider's webhook, the organization's onboarding envelope, the admin
back-office (envelopes, relaunch, pending approvals, KYB review, reset)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from backend.identity.models import KybStatus
from backend.onboarding.kyb_review import PENDING_APPROVAL_SORTS
from backend.onboarding.status import ESignStatus
from backend.onboarding.supervision import SIGNATURE_REQUEST_SORTS
from backend.onboarding.verification import VerificationPolicy
from schemas.common import ComputedBoolean, PageQuery, UtcDateTime, enum_of, open_values, page_of, sort_by
from schemas.onboarding.registry import RegistryCheckOut


class EsignSignatureRequestRef(Schema):
    id = fields.String(required=True, metadata={"description": "the provider's signature request id"})
    status = fields.String(metadata=open_values("provider status: draft, approval, ongoing, done, declined, "
                                                "expired, canceled (the provider's word, as sent)"))
    external_id = fields.String(allow_none=True)


class EsignSignerRef(Schema):
    id = fields.String(required=True)
    status = fields.String(metadata=open_values("the provider's word, as sent"))


class EsignEventData(Schema):
    signature_request = fields.Nested(EsignSignatureRequestRef, required=True)
    signer = fields.Nested(EsignSignerRef)


class EsignWebhookEventIn(Schema):
    """The provider's event, authenticated by `X-Esign-Signature-256` over the raw body."""

    event_id = fields.String(required=True, metadata={"description": "deduplication key"})
    event_name = fields.String(required=True, metadata={"example": "signature_request.done"})
    event_time = fields.String(metadata={"description": "Unix seconds"})
    sandbox = fields.Boolean()
    data = fields.Nested(EsignEventData, required=True)


class WebhookAckOut(Schema):
    received = fields.Boolean(required=True, metadata={"example": True})
    duplicate = fields.Boolean(required=True, metadata={"description": "true when event_id was already stored"})


class DelegatorIn(Schema):
    firstName = fields.String(required=True, validate=validate.Length(min=1, max=120))
    lastName = fields.String(required=True, validate=validate.Length(min=1, max=120))
    role = fields.String(required=True, validate=validate.Length(min=1, max=120),
                         metadata={"example": "Président"})


class OnboardingStartIn(Schema):
    delegator = fields.Nested(DelegatorIn, load_default=None, allow_none=True, metadata={
        "description": "the representative listed on the registry extract who delegates to the signer; "
                       "required when the billing profile's signer is not on the extract (delegation proof)"})


class SignatureDocumentOut(Schema):
    """A document of an envelope (`ESignDocument`)."""

    type = fields.String(attribute="document_type", required=True)
    identityVerificationPolicy = fields.String(
        attribute="identity_verification_policy", required=True,
        metadata={"description": "the policy this document asks for (`qualified`, or the admin's override)"})
    signatureLevel = fields.String(attribute="signature_level", required=True,
                                   metadata={"description": "the signer's level: the strongest policy asked"})
    authenticationMode = fields.String(attribute="authentication_mode", allow_none=True,
                                       metadata={"description": "null for the qualified level"})
    signedFileStored = ComputedBoolean(lambda d: d.signed_storage_key is not None, required=True, metadata={
        "description": "the signed PDF is in private storage (GET .../onboarding/documents/{type})"})


class SignatureRequestOut(Schema):
    """An envelope with its documents: `{envelope, documents}` (see `signature_request`)."""

    id = fields.String(attribute="envelope.id", required=True)
    status = fields.String(attribute="envelope.status", required=True,
                           metadata={"enum": [s.value for s in ESignStatus]})
    providerSignatureRequestId = fields.String(attribute="envelope.provider_signature_request_id", allow_none=True)
    signatureLink = fields.String(attribute="envelope.signature_link", allow_none=True)
    errorReason = fields.String(attribute="envelope.error_reason", allow_none=True)
    signerOnRegistryExtract = fields.Boolean(attribute="envelope.signer_on_registry_extract", required=True,
                                             metadata={"description": "false: the delegation documents are required"})
    registryChecked = fields.Boolean(attribute="envelope.registry_checked", required=True, metadata={
        "description": "the company registry answered when the envelope was opened (or at a later admin refresh)"})
    registryCheck = fields.Nested(RegistryCheckOut, attribute="envelope.registry_check", allow_none=True)
    auditTrailStored = ComputedBoolean(lambda r: r["envelope"].audit_trail_storage_key is not None, metadata={
        "description": "the provider's audit trail is in private storage (GET .../onboarding/documents/audit_trail)"})
    documents = fields.List(fields.Nested(SignatureDocumentOut), required=True)


def signature_request(envelope, documents) -> dict | None:
    """What `SignatureRequestOut` dumps (None without an envelope)."""
    return None if envelope is None else {"envelope": envelope, "documents": documents}


class OnboardingOut(Schema):
    signatureRequest = fields.Nested(SignatureRequestOut, allow_none=True, required=True)
    kybStatus = fields.String(allow_none=True, required=True, metadata=enum_of(KybStatus))


class SignatureRequestStartOut(Schema):
    signatureRequest = fields.Nested(SignatureRequestOut, required=True)


class OnboardingQuery(Schema):
    reconcile = fields.Boolean(load_default=False, metadata={"description": "ask the provider first"})


def _iso(name: str) -> UtcDateTime:
    return UtcDateTime(attribute=name)


class SignatureRequestItem(Schema):
    id = fields.String(required=True)
    organizationId = fields.String(attribute="organization_id", required=True)
    organizationName = fields.String(attribute="organization_name")
    status = fields.String(required=True, metadata=enum_of(ESignStatus))
    providerSignatureRequestId = fields.String(attribute="provider_signature_request_id", allow_none=True)
    signatureLink = fields.String(attribute="signature_link", allow_none=True)
    deliveryMode = fields.String(attribute="delivery_mode")
    identityVerificationPolicy = fields.String(attribute="identity_verification_policy")
    signerOnRegistryExtract = fields.Boolean(attribute="signer_on_registry_extract")
    registryChecked = fields.Boolean(attribute="registry_checked")
    errorReason = fields.String(attribute="error_reason", allow_none=True)
    createdAt = _iso("created_at")
    statusChangedAt = _iso("status_changed_at")


class SignatureRequestsQuery(PageQuery):
    sortBy = sort_by(SIGNATURE_REQUEST_SORTS, "createdAt")
    status = fields.String(load_default=None, validate=validate.OneOf([s.value for s in ESignStatus]))
    organizationId = fields.String(load_default=None)


SignatureRequestsPage = page_of(SignatureRequestItem, "SignatureRequests")


class RelaunchIn(Schema):
    signatureRequestIds = fields.List(fields.String(), load_default=None, validate=validate.Length(max=500))
    statuses = fields.List(fields.String(validate=validate.OneOf([s.value for s in ESignStatus])),
                           load_default=None)


class RelaunchedOut(Schema):
    id = fields.String(required=True)
    newSignatureRequestId = fields.String(required=True)


class RelaunchSkippedOut(Schema):
    id = fields.String(required=True)
    reason = fields.String(required=True)


class RelaunchOut(Schema):
    relaunched = fields.List(fields.Nested(RelaunchedOut), required=True)
    skipped = fields.List(fields.Nested(RelaunchSkippedOut), required=True)
    failed = fields.List(fields.Nested(RelaunchSkippedOut), required=True)


class PendingApprovalItem(Schema):
    id = fields.String(required=True)
    actorType = fields.String(attribute="actor_type")
    legalName = fields.String(attribute="legal_name")
    kybStatus = fields.String(attribute="kyb_status", allow_none=True, metadata=enum_of(KybStatus))
    kybSubmittedAt = _iso("kyb_submitted_at")
    onboardingStatus = fields.String(attribute="onboarding_status", allow_none=True, metadata=enum_of(ESignStatus))
    companyMentionsMissing = fields.List(fields.String(), attribute="company_mentions_missing", metadata={
        "description": "the company mentions of the billing profile its invoices would lack (legalForm, "
                       "shareCapitalCents, registration): shown to the reviewer, never a gate"})


PendingApprovalsPage = page_of(PendingApprovalItem, "PendingApprovals")


class PendingApprovalsQuery(PageQuery):
    sortBy = sort_by(PENDING_APPROVAL_SORTS, "kybSubmittedAt")
    actorType = fields.String(load_default=None, validate=validate.OneOf(["industrial", "distributor", "printer"]))


class KybReviewIn(Schema):
    status = fields.String(required=True, validate=validate.OneOf(["approved", "rejected"]))
    note = fields.String(required=True, validate=validate.Length(max=2000))


class KybReviewOut(Schema):
    id = fields.String(required=True)
    kybStatus = fields.String(attribute="kyb_status", required=True, metadata=enum_of(KybStatus))
    kybNote = fields.String(attribute="kyb_note", allow_none=True)
    kybReviewedAt = _iso("kyb_reviewed_at")


class KybReviewData(Schema):
    organization = fields.Nested(KybReviewOut, required=True)


class KybDocumentUpload(Schema):
    """The multipart form of a KYB delegation document."""

    type = fields.String(required=True, metadata={"description": "the delegation document type"})
    file = fields.Raw(required=True, metadata={"type": "string", "format": "binary"})


class KybDocumentOut(Schema):
    type = fields.String(attribute="document_type", required=True)
    contentType = fields.String(attribute="content_type", required=True)
    sizeBytes = fields.Integer(attribute="size_bytes", required=True)
    uploadedAt = _iso("uploaded_at")


class VerificationOverrideIn(Schema):
    policy = fields.String(required=True, validate=validate.OneOf([p.value for p in VerificationPolicy]))
    note = fields.String(required=True, validate=validate.Length(min=1, max=2000),
                         metadata={"description": "why the default policy does not fit (kept in the audit log)"})


class VerificationOverrideOut(Schema):
    documentType = fields.String(attribute="document_type", required=True)
    policy = fields.String(required=True)
    note = fields.String(required=True)
    setByUserId = fields.String(attribute="set_by_user_id", allow_none=True)
    setAt = _iso("set_at")


class KybDocumentData(Schema):
    document = fields.Nested(KybDocumentOut, required=True)


class VerificationOverrideData(Schema):
    override = fields.Nested(VerificationOverrideOut, required=True)


class VerificationOverridesOut(Schema):
    organizationId = fields.String(required=True)
    overrides = fields.List(fields.Nested(VerificationOverrideOut), required=True)


class VerificationOverrideRemovedOut(Schema):
    documentType = fields.String(required=True)
    removed = fields.Boolean(required=True, metadata={"description": "false when there was no override"})


class ResetOnboardingOut(Schema):
    organizationId = fields.String(required=True)
    invalidated = fields.Integer(required=True)
    kybStatus = fields.String(allow_none=True, required=True, metadata=enum_of(KybStatus))
