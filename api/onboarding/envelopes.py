"""Onboarding routes: the organization's envelope (start, state, signed files), its KYB delegation
documents, and the admin back-office (envelopes list, relaunch, pending approvals, KYB review,
verification-policy overrides, reset)."""

from __future__ import annotations

import falcon

from api.access import ADMIN, KYB_REVIEWER, SESSION, Route
from api.operations import operation
from backend.errors import PayloadTooLarge, ValidationError
from backend.identity import workspace
from backend.listing import ListParams
from backend.onboarding import documents as signed_documents
from backend.onboarding import envelopes, kyb_documents, kyb_review, supervision, verification_overrides
from backend.onboarding.models import KybDocumentType
from backend.onboarding.verification import DocumentType
from schemas.onboarding.envelopes import (
    KybDocumentData,
    KybDocumentUpload,
    KybReviewData,
    KybReviewIn,
    OnboardingOut,
    OnboardingQuery,
    OnboardingStartIn,
    PendingApprovalsPage,
    PendingApprovalsQuery,
    RelaunchIn,
    RelaunchOut,
    ResetOnboardingOut,
    SignatureRequestsPage,
    SignatureRequestsQuery,
    SignatureRequestStartOut,
    VerificationOverrideData,
    VerificationOverrideIn,
    VerificationOverrideRemovedOut,
    VerificationOverridesOut,
    signature_request,
)

SIGNED_FILES = ["framework_contract", "cgu_acceptance", "sepa_mandate", "delegation_proof", "audit_trail"]

SIGNED_DOCUMENT_TYPES = [t.value for t in DocumentType]


class Onboarding:
    def __init__(self, storage, esign, registry, cache_days: int) -> None:
        self.storage, self.esign = storage, esign
        self.registry, self.cache_days = registry, cache_days

    @operation(
        "Onboarding state",
        description="The organization's latest onboarding envelope and its KYB status (members and admins).",
        tags=("onboarding",),
        query=OnboardingQuery,
        answer=OnboardingOut,
        answer_description="the state",
        errors={404: "NOT_FOUND"},
    )
    def on_get(self, req, resp, organization_id: str, query: dict) -> dict:
        organization, envelope, documents = envelopes.onboarding_state(
            principal=req.context.principal, organization_id=organization_id, reconcile=query["reconcile"],
            provider=self.esign)
        return {"signatureRequest": signature_request(envelope, documents), "kybStatus": organization.kyb_status}

    @operation(
        "Start the onboarding signature",
        description=("Open the onboarding envelope (manager or admin); the provider is called asynchronously. "
                     "The company registry decides whether the signer is on the extract; when it cannot "
                     "answer, the envelope has registryChecked false and the delegation documents are required."),
        tags=("onboarding",),
        body=OnboardingStartIn,
        answer=SignatureRequestStartOut,
        answer_description="envelope recorded as pending_creation",
        status=201,
        errors={400: "VALIDATION_ERROR", 403: "FORBIDDEN: not a manager of the organization",
                409: "CONFLICT: details.reason onboarding_pending, billing_profile_missing, iban_missing, "
                     "siren_unknown_to_registry or company_ceased"},
    )
    def on_post_start(self, req, resp, organization_id: str, body: dict) -> dict:
        envelope = envelopes.start_onboarding(principal=req.context.principal, organization_id=organization_id,
                                              delegator=body["delegator"], registry=self.registry,
                                              cache_days=self.cache_days)
        return {"signatureRequest": signature_request(envelope, envelopes.envelope_documents(envelope.id))}

    @operation(
        "Download a signed onboarding document or the provider's audit trail",
        description=(
            "A signed PDF of the latest envelope (members and admins): a document type or "
            "audit_trail."
        ),
        tags=("onboarding",),
        path_enums={"name": SIGNED_FILES},
        produces="application/pdf",
        answer_description="the signed PDF, raw",
        errors={404: "NOT_FOUND: not a member, or the file is not stored (not signed yet)"},
    )
    def on_get_file(self, req, resp, organization_id: str, name: str) -> None:
        filename, chunks = signed_documents.open_signed_file(
            principal=req.context.principal, organization_id=organization_id, name=name, storage=self.storage)
        resp.content_type = "application/pdf"
        resp.downloadable_as = filename
        resp.set_header("Cache-Control", "private, no-store")
        resp.stream = chunks


class KybDocuments:
    max_body_bytes = kyb_documents.MAX_BYTES + 64 * 1024  # the file and the multipart framing

    def __init__(self, storage) -> None:
        self.storage = storage

    @operation(
        "Upload a KYB delegation document (PDF, PNG or JPEG, 10 MB max)",
        description="Upload a delegation document (manager or admin); a new upload replaces the previous one.",
        tags=("onboarding",),
        upload=KybDocumentUpload,
        answer=KybDocumentData,
        answer_description="stored",
        status=201,
        errors={400: "VALIDATION_ERROR", 413: "PAYLOAD_TOO_LARGE"},
    )
    def on_post(self, req, resp, organization_id: str) -> dict:
        if not (req.content_type or "").lower().startswith(falcon.MEDIA_MULTIPART):
            raise falcon.HTTPUnsupportedMediaType(description="send multipart/form-data with `file` and `type`")
        content, document_type = b"", None
        for part in req.get_media():
            if part.name == "file":
                content = part.stream.read(kyb_documents.MAX_BYTES + 1)
                if len(content) > kyb_documents.MAX_BYTES:
                    raise PayloadTooLarge("the file exceeds 10 MB", limitBytes=kyb_documents.MAX_BYTES)
            elif part.name == "type":
                if part.text is None:  # a part sent with a non-text content type
                    raise ValidationError("the type part must be text", fields={"type": ["a text field"]})
                document_type = part.text.strip()
        document = kyb_documents.upload_kyb_document(
            principal=req.context.principal, organization_id=organization_id, document_type=document_type,
            content=content, storage=self.storage)
        return {"document": document}


class AdminKybDocuments:
    def __init__(self, storage) -> None:
        self.storage = storage

    @operation(
        "Download a KYB delegation document",
        description="One delegation document of the organization, as uploaded (admin, permission kyb.review).",
        tags=("admin-onboarding",),
        path_enums={"document_type": [t.value for t in KybDocumentType]},
        produces=tuple(kyb_documents.EXTENSIONS),
        answer_description="the file, raw, with the type detected at upload",
        errors={404: "NOT_FOUND: unknown organization, or no document of this type"},
    )
    def on_get(self, req, resp, organization_id: str, document_type: str) -> None:
        document, filename, chunks = kyb_documents.open_kyb_document(
            organization_id=organization_id, document_type=document_type, storage=self.storage)
        resp.content_type = document.content_type
        resp.downloadable_as = filename
        resp.set_header("Cache-Control", "private, no-store")
        resp.stream = chunks


class AdminSignatureRequests:
    def __init__(self, esign) -> None:
        self.esign = esign

    @operation(
        "List onboarding envelopes",
        description="sortBy is one of createdAt (default), statusChangedAt, status, organizationName.",
        tags=("admin-onboarding",),
        query=SignatureRequestsQuery,
        answer=SignatureRequestsPage,
        answer_description="a page",
    )
    def on_get(self, req, resp, query: dict):
        return supervision.list_signature_requests(ListParams.from_query(query), status=query["status"],
                                                   organization_id=query["organizationId"])

    @operation(
        "Relaunch onboarding envelopes",
        description=(
            "Relaunch pending or failed envelopes (each replaced by a new one). Default selection, "
            "without ids or statuses, every envelope in error or expired, and every envelope pending "
            "for more than 7 days. Only an organization's latest envelope is relaunched."
        ),
        tags=("admin-onboarding",),
        body=RelaunchIn,
        body_required=False,
        answer=RelaunchOut,
        answer_description="what happened to each envelope",
    )
    def on_post_relaunch(self, req, resp, body: dict) -> dict:
        return supervision.relaunch_envelopes(
            signature_request_ids=body["signatureRequestIds"], statuses=body["statuses"],
            actor_user_id=req.context.principal.user_id, provider=self.esign)


class AdminPendingApprovals:
    @operation(
        "Pending approvals",
        description=(
            "Organizations whose KYB awaits a decision, with their onboarding status "
            "(server-paginated). sortBy is one of kybSubmittedAt (default), legalName, createdAt."
        ),
        tags=("admin-onboarding",),
        query=PendingApprovalsQuery,
        answer=PendingApprovalsPage,
        answer_description="a page",
    )
    def on_get(self, req, resp, query: dict):
        return kyb_review.list_pending_approvals(ListParams.from_query(query), actor_type=query["actorType"])


class AdminVerificationOverrides:
    @operation(
        "Verification-policy overrides",
        tags=("admin-onboarding",),
        answer=VerificationOverridesOut,
        answer_description="the overrides",
        errors={404: "NOT_FOUND"},
    )
    def on_get(self, req, resp, organization_id: str) -> dict:
        return {"organizationId": organization_id,
                "overrides": verification_overrides.verification_overrides(organization_id)}

    @operation(
        "Override a verification policy",
        description=(
            "Set the verification policy of one document type of the organization (audited). Replaces "
            "the default policy (qualified for onboarding, Specification A's default per document "
            "type elsewhere) from the next envelope on; recorded as "
            "onboarding.verification_policy.overridden."
        ),
        tags=("admin-onboarding",),
        body=VerificationOverrideIn,
        answer=VerificationOverrideData,
        answer_description="the override",
        errors={400: "VALIDATION_ERROR", 404: "NOT_FOUND"},
        path_enums={"document_type": SIGNED_DOCUMENT_TYPES},
    )
    def on_put_item(self, req, resp, organization_id: str, document_type: str, body: dict) -> dict:
        override = verification_overrides.set_verification_override(
            organization_id=organization_id, document_type=document_type, policy=body["policy"], note=body["note"],
            actor_user_id=req.context.principal.user_id)
        return {"override": override}

    @operation(
        "Remove a verification-policy override",
        description="Go back to the default policy for one document type (audited when an override existed).",
        tags=("admin-onboarding",),
        answer=VerificationOverrideRemovedOut,
        answer_description="done",
        errors={404: "NOT_FOUND"},
        path_enums={"document_type": SIGNED_DOCUMENT_TYPES},
    )
    def on_delete_item(self, req, resp, organization_id: str, document_type: str) -> dict:
        removed = verification_overrides.remove_verification_override(
            organization_id=organization_id, document_type=document_type,
            actor_user_id=req.context.principal.user_id)
        return {"documentType": document_type, "removed": removed}


class AdminOrganizationOnboarding:
    def __init__(self, esign) -> None:
        self.esign = esign

    @operation(
        "KYB review",
        description="Approve or reject the organization's KYB (audited as kyb.company.reviewed).",
        tags=("admin-onboarding",),
        body=KybReviewIn,
        answer=KybReviewData,
        answer_description="the organization's KYB",
        errors={404: "NOT_FOUND", 409: "CONFLICT: details.reason onboarding_not_signed or "
                                       "delegation_documents_missing (details.missing)"},
    )
    def on_post_review(self, req, resp, organization_id: str, body: dict) -> dict:
        organization = kyb_review.review_organization(organization_id=organization_id, status=body["status"],
                                                      note=body["note"], actor_user_id=req.context.principal.user_id)
        return {"organization": organization}

    @operation(
        "Reset onboarding",
        description="Reset the onboarding journey: every envelope invalidated, KYB status cleared (audited).",
        tags=("admin-onboarding",),
        answer=ResetOnboardingOut,
        answer_description="done",
        errors={404: "NOT_FOUND"},
    )
    def on_post_reset(self, req, resp, organization_id: str) -> dict:
        return supervision.reset_onboarding(organization_id=organization_id,
                                            actor_user_id=req.context.principal.user_id,
                                            provider=self.esign)


def routes(deps) -> list[Route]:
    # The workspace routing of identity asks onboarding whether an envelope is pending.
    workspace.set_onboarding_pending_check(envelopes.has_pending_envelope)
    organization = Onboarding(deps.storage, deps.esign, deps.registry, deps.config.registry_cache_days)
    admin_envelopes = AdminSignatureRequests(deps.esign)
    admin_organization, overrides = AdminOrganizationOnboarding(deps.esign), AdminVerificationOverrides()
    base = "/api/organizations/{organization_id}/onboarding"
    admin_base = "/api/admin/organizations/{organization_id}"
    return [
        Route(base, organization, SESSION),
        Route(f"{base}/start", organization, SESSION, suffix="start"),
        Route(f"{base}/documents/{{name}}", organization, SESSION, suffix="file"),
        Route("/api/organizations/{organization_id}/kyb/documents", KybDocuments(deps.storage), SESSION),
        Route("/api/admin/onboarding/signature-requests", admin_envelopes, ADMIN),
        Route("/api/admin/onboarding/signature-requests/relaunch", admin_envelopes, ADMIN, suffix="relaunch"),
        Route("/api/admin/approvals/pending", AdminPendingApprovals(), ADMIN),
        Route(f"{admin_base}/review", admin_organization, KYB_REVIEWER, suffix="review"),
        Route(f"{admin_base}/reset-onboarding", admin_organization, ADMIN, suffix="reset"),
        Route(f"{admin_base}/kyb/documents/{{document_type}}", AdminKybDocuments(deps.storage), KYB_REVIEWER),
        Route(f"{admin_base}/verification-policies", overrides, KYB_REVIEWER),
        Route(f"{admin_base}/verification-policies/{{document_type}}", overrides, KYB_REVIEWER, suffix="item"),
    ]
