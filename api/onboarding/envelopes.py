"""Onboarding routes: the organization's envelope (start, state, signed files), its KYB delegation
documents, and the admin back-office (envelopes list, relaunch, pending approvals, KYB review,
verification-policy overrides, reset)."""

from __future__ import annotations

import falcon

from api.access import ADMIN, KYB_REVIEWER, SESSION, Route
from api.requests import load
from api.responses import send
from backend.errors import PayloadTooLarge
from backend.identity import workspace
from backend.listing import ListParams
from backend.onboarding import documents as signed_documents
from backend.onboarding import envelopes, kyb_documents, kyb_review, supervision, verification_overrides
from backend.onboarding.provider import current_provider
from schemas.onboarding.envelopes import (
    KybDocumentOut,
    KybReviewIn,
    KybReviewOut,
    OnboardingQuery,
    OnboardingStartIn,
    PendingApprovalItem,
    PendingApprovalsQuery,
    RelaunchIn,
    SignatureDocumentOut,
    SignatureRequestItem,
    SignatureRequestOut,
    SignatureRequestsQuery,
    VerificationOverrideIn,
    VerificationOverrideOut,
)


def _envelope_out(envelope, documents) -> dict | None:
    if envelope is None:
        return None
    return {**SignatureRequestOut(exclude=("documents",)).dump(envelope),
            "documents": SignatureDocumentOut(many=True).dump(documents)}


class Onboarding:
    def __init__(self, storage) -> None:
        self.storage = storage

    def on_get(self, req, resp, organization_id: str) -> None:
        """The organization's latest onboarding envelope and its KYB status (members and admins).
        ---
        summary: Onboarding state
        tags: [onboarding]
        parameters:
          - {in: query, name: reconcile, schema: {type: boolean}, description: ask the provider first}
        responses:
          200: {description: the state, content: {application/json: {schema: OnboardingEnvelope}}}
          404: {description: NOT_FOUND, unknown or not a member}
        """
        query = OnboardingQuery().load(dict(req.params))
        organization, envelope, documents = envelopes.onboarding_state(
            principal=req.context.principal, organization_id=organization_id, reconcile=query["reconcile"])
        send(resp, {"signatureRequest": _envelope_out(envelope, documents), "kybStatus": organization.kyb_status})

    def on_post_start(self, req, resp, organization_id: str) -> None:
        """Open the onboarding envelope (manager or admin); the provider is called asynchronously.
        ---
        summary: Start the onboarding signature
        tags: [onboarding]
        requestBody: {content: {application/json: {schema: OnboardingStartIn}}}
        responses:
          201: {description: envelope recorded as pending_creation,
                content: {application/json: {schema: SignatureRequestStartEnvelope}}}
          400: {description: VALIDATION_ERROR, delegator missing while the signer is not on the registry extract}
          403: {description: "FORBIDDEN: not a manager of the organization"}
          409: {description: "CONFLICT: details.reason onboarding_pending, billing_profile_missing or iban_missing"}
        """
        body = load(req, OnboardingStartIn())
        envelope = envelopes.start_onboarding(principal=req.context.principal, organization_id=organization_id,
                                              delegator=body["delegator"])
        documents = envelopes.envelope_documents(envelope.id)
        send(resp, {"signatureRequest": _envelope_out(envelope, documents)}, 201)

    def on_get_file(self, req, resp, organization_id: str, name: str) -> None:
        """A signed PDF of the latest envelope (members and admins): a document type or audit_trail.
        ---
        summary: Download a signed onboarding document or the provider's audit trail
        tags: [onboarding]
        parameters:
          - {in: path, name: name, required: true, schema: {type: string, enum: [framework_contract, cgu_acceptance,
             sepa_mandate, delegation_proof, audit_trail]}}
        responses:
          200:
            description: the signed PDF, raw
            content: {application/pdf: {schema: {type: string, format: binary}}}
          404: {description: "NOT_FOUND: not a member, or the file is not stored (not signed yet)"}
        """
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

    def on_post(self, req, resp, organization_id: str) -> None:
        """Upload a delegation document (manager or admin); a new upload replaces the previous one.
        ---
        summary: Upload a KYB delegation document (PDF, PNG or JPEG, 10 MB max)
        tags: [onboarding]
        requestBody:
          required: true
          content:
            multipart/form-data:
              schema:
                type: object
                required: [file, type]
                properties:
                  file: {type: string, format: binary}
                  type: {type: string, enum: [delegation_letter, delegator_id_document, delegate_id_document]}
        responses:
          201: {description: stored, content: {application/json: {schema: KybDocumentEnvelope}}}
          400: {description: VALIDATION_ERROR, unknown type or content}
          413: {description: PAYLOAD_TOO_LARGE, over 10 MB}
        """
        if not (req.content_type or "").lower().startswith(falcon.MEDIA_MULTIPART):
            raise falcon.HTTPUnsupportedMediaType(description="send multipart/form-data with `file` and `type`")
        content, document_type = b"", None
        for part in req.get_media():
            if part.name == "file":
                content = part.stream.read(kyb_documents.MAX_BYTES + 1)
                if len(content) > kyb_documents.MAX_BYTES:
                    raise PayloadTooLarge("the file exceeds 10 MB", limitBytes=kyb_documents.MAX_BYTES)
            elif part.name == "type":
                document_type = part.text.strip()
        document = kyb_documents.upload_kyb_document(
            principal=req.context.principal, organization_id=organization_id, document_type=document_type,
            content=content, storage=self.storage)
        send(resp, {"document": KybDocumentOut().dump(document)}, 201)


class AdminKybDocuments:
    def __init__(self, storage) -> None:
        self.storage = storage

    def on_get(self, req, resp, organization_id: str, document_type: str) -> None:
        """One delegation document of the organization, as uploaded (admin, permission kyb.review).
        ---
        summary: Download a KYB delegation document
        tags: [admin-onboarding]
        parameters:
          - {in: path, name: document_type, required: true, schema: {type: string, enum: [delegation_letter,
             delegator_id_document, delegate_id_document]}}
        responses:
          200:
            description: the file, raw, with the type detected at upload
            content:
              application/pdf: {schema: {type: string, format: binary}}
              image/png: {schema: {type: string, format: binary}}
              image/jpeg: {schema: {type: string, format: binary}}
          404: {description: "NOT_FOUND: unknown organization, or no document of this type"}
        """
        document, filename, chunks = kyb_documents.open_kyb_document(
            organization_id=organization_id, document_type=document_type, storage=self.storage)
        resp.content_type = document.content_type
        resp.downloadable_as = filename
        resp.set_header("Cache-Control", "private, no-store")
        resp.stream = chunks


class AdminSignatureRequests:
    def on_get(self, req, resp) -> None:
        """Onboarding envelopes of every organization (server-paginated).
        ---
        summary: List onboarding envelopes
        tags: [admin-onboarding]
        parameters:
          - {in: query, schema: SignatureRequestsQuery}
        description: sortBy is one of createdAt (default), statusChangedAt, status, organizationName.
        responses:
          200: {description: a page, content: {application/json: {schema: SignatureRequestsEnvelope}}}
        """
        query = SignatureRequestsQuery().load(dict(req.params))
        page = supervision.list_signature_requests(ListParams.from_query(query), status=query["status"],
                                                   organization_id=query["organizationId"])
        send(resp, page.as_dict(SignatureRequestItem().dump))

    def on_post_relaunch(self, req, resp) -> None:
        """Relaunch pending or failed envelopes (each replaced by a new one).
        ---
        summary: Relaunch onboarding envelopes
        description: Default selection, without ids or statuses, every envelope in error or expired, and
          every envelope pending for more than 7 days. Only an organization's latest envelope is relaunched.
        tags: [admin-onboarding]
        requestBody: {content: {application/json: {schema: RelaunchIn}}}
        responses:
          200: {description: what happened to each envelope, content: {application/json: {schema: RelaunchEnvelope}}}
        """
        body = load(req, RelaunchIn())
        send(resp, supervision.relaunch_envelopes(
            signature_request_ids=body["signatureRequestIds"], statuses=body["statuses"],
            actor_user_id=req.context.principal.user_id, provider=current_provider()))


class AdminPendingApprovals:
    def on_get(self, req, resp) -> None:
        """Organizations whose KYB awaits a decision, with their onboarding status (server-paginated).
        ---
        summary: Pending approvals
        tags: [admin-onboarding]
        parameters:
          - {in: query, schema: PendingApprovalsQuery}
        description: sortBy is one of kybSubmittedAt (default), legalName, createdAt.
        responses:
          200: {description: a page, content: {application/json: {schema: PendingApprovalsEnvelope}}}
        """
        query = PendingApprovalsQuery().load(dict(req.params))
        page = kyb_review.list_pending_approvals(ListParams.from_query(query), actor_type=query["actorType"])
        send(resp, page.as_dict(PendingApprovalItem().dump))


class AdminVerificationOverrides:
    def on_get(self, req, resp, organization_id: str) -> None:
        """The organization's verification-policy overrides, by document type.
        ---
        summary: Verification-policy overrides
        tags: [admin-onboarding]
        responses:
          200: {description: the overrides, content: {application/json: {schema: VerificationOverridesEnvelope}}}
          404: {description: NOT_FOUND}
        """
        overrides = verification_overrides.verification_overrides(organization_id)
        send(resp, {"organizationId": organization_id,
                    "overrides": VerificationOverrideOut(many=True).dump(overrides)})

    def on_put_item(self, req, resp, organization_id: str, document_type: str) -> None:
        """Set the verification policy of one document type of the organization (audited).
        ---
        summary: Override a verification policy
        description: Replaces the default policy (qualified for onboarding, Specification A's default per
          document type elsewhere) from the next envelope on; recorded as onboarding.verification_policy.overridden.
        tags: [admin-onboarding]
        requestBody: {content: {application/json: {schema: VerificationOverrideIn}}}
        responses:
          200: {description: the override, content: {application/json: {schema: VerificationOverrideEnvelope}}}
          400: {description: VALIDATION_ERROR, unknown document type or policy, missing note}
          404: {description: NOT_FOUND}
        """
        body = load(req, VerificationOverrideIn())
        override = verification_overrides.set_verification_override(
            organization_id=organization_id, document_type=document_type, policy=body["policy"], note=body["note"],
            actor_user_id=req.context.principal.user_id)
        send(resp, {"override": VerificationOverrideOut().dump(override)})

    def on_delete_item(self, req, resp, organization_id: str, document_type: str) -> None:
        """Go back to the default policy for one document type (audited when an override existed).
        ---
        summary: Remove a verification-policy override
        tags: [admin-onboarding]
        responses:
          200: {description: done, content: {application/json: {schema: VerificationOverrideRemovedEnvelope}}}
          404: {description: NOT_FOUND}
        """
        removed = verification_overrides.remove_verification_override(
            organization_id=organization_id, document_type=document_type,
            actor_user_id=req.context.principal.user_id)
        send(resp, {"documentType": document_type, "removed": removed})


class AdminOrganizationOnboarding:
    def on_post_review(self, req, resp, organization_id: str) -> None:
        """Approve or reject the organization's KYB (audited as kyb.company.reviewed).
        ---
        summary: KYB review
        tags: [admin-onboarding]
        requestBody: {content: {application/json: {schema: KybReviewIn}}}
        responses:
          200: {description: the organization's KYB, content: {application/json: {schema: KybReviewEnvelope}}}
          404: {description: NOT_FOUND}
          409: {description: "CONFLICT: details.reason onboarding_not_signed or delegation_documents_missing
            (details.missing)"}
        """
        body = load(req, KybReviewIn())
        organization = kyb_review.review_organization(organization_id=organization_id, status=body["status"],
                                                      note=body["note"], actor_user_id=req.context.principal.user_id)
        send(resp, {"organization": KybReviewOut().dump(organization)})

    def on_post_reset(self, req, resp, organization_id: str) -> None:
        """Reset the onboarding journey: every envelope invalidated, KYB status cleared (audited).
        ---
        summary: Reset onboarding
        tags: [admin-onboarding]
        responses:
          200: {description: done, content: {application/json: {schema: ResetOnboardingEnvelope}}}
          404: {description: NOT_FOUND}
        """
        send(resp, supervision.reset_onboarding(organization_id=organization_id,
                                                actor_user_id=req.context.principal.user_id,
                                                provider=current_provider()))


def routes(deps) -> list[Route]:
    # The workspace routing of identity asks onboarding whether an envelope is pending.
    workspace.set_onboarding_pending_check(envelopes.has_pending_envelope)
    organization, admin_envelopes = Onboarding(deps.storage), AdminSignatureRequests()
    admin_organization, overrides = AdminOrganizationOnboarding(), AdminVerificationOverrides()
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
