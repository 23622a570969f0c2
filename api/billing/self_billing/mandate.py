"""The distributor's self-billing mandate (spec C "Self-billing mandate" routes): request, state,
revocation, signed PDF. The provider's webhook is the onboarding one (no route here)."""

from __future__ import annotations

from api.access import BILLING_MANAGER, Route, roles
from api.operations import operation
from api.responses import send_pdf
from backend.billing.self_billing import mandate as mandates
from schemas.billing.self_billing.mandate import MandateAnswer, MandateRequestedAnswer, MandateRevokeIn

READERS = roles("distributor", "admin")
PATH = "/api/billing/organizations/{organization_id}/self-billing-mandate"


class SelfBillingMandate:
    def __init__(self, deps) -> None:
        self.esign, self.storage, self.config = deps.esign, deps.storage, deps.config

    @operation("Request the self-billing mandate",
               description="Admin. Renders the `self_billing_mandate` template (platform as agent, distributor as "
               "supplier) and sends it to the e-signature provider at level `electronic_signature`, signer the "
               "distributor's billing-profile signer; answers the `pending_signature` mandate and the signer's link. "
               "409 `CONFLICT` when a mandate is active (`details.reason`: `mandate_active`, "
               "`mandate_request_in_progress`, `not_a_distributor`, `billing_profile_missing`); 502 "
               "`ESIGN_PROVIDER_FAILED` when the provider fails (nothing is left behind: retry).",
               tags=("billing",), answer=MandateRequestedAnswer, status=201,
               errors={404: "NOT_FOUND", 409: "CONFLICT", 502: "ESIGN_PROVIDER_FAILED"})
    def on_post(self, req, resp, organization_id: str) -> dict:
        principal = req.context.principal
        requested = mandates.request_mandate(principal=principal, organization_id=organization_id,
                                             provider=self.esign, storage=self.storage, config=self.config)
        return {"mandate": requested.mandate, "signatureLink": requested.signature_link}

    @operation("The organization's self-billing mandate",
               description="Admin or member of the organization: the current mandate's status and dates; "
               "`esignRequestRef`, `documentStorageKey`, the signer and the reasons for admins only. 404 without "
               "mandate (or for a non-member).",
               tags=("billing",), answer=MandateAnswer, errors={404: "NOT_FOUND"})
    def on_get(self, req, resp, organization_id: str) -> dict:
        principal = req.context.principal
        mandate = mandates.mandate_of(principal=principal, organization_id=organization_id)
        return {"mandate": mandates.mandate_view(mandate, full=principal.is_admin)}

    @operation("Revoke the self-billing mandate",
               description="Admin: the signed mandate becomes `revoked` (terminal), with the reason in the billing "
               "audit trail. 409 `CONFLICT` (`no_signed_mandate`) when the organization has no signed mandate.",
               tags=("billing",), body=MandateRevokeIn, answer=MandateAnswer,
               errors={400: "VALIDATION_ERROR: reason required", 404: "NOT_FOUND", 409: "CONFLICT"})
    def on_delete(self, req, resp, organization_id: str, body: dict) -> dict:
        return {"mandate": mandates.revoke_mandate(principal=req.context.principal, organization_id=organization_id,
                                                   reason=body["reason"])}

    @operation("Download the signed self-billing mandate",
               description="The signed PDF, for an admin or a member of the organization (`manager`, `member`, "
               "`billing`), else 403; 404 without mandate; 404 `BILLING_PDF_NOT_READY` until the signed PDF is "
               "stored; 409 `DOCUMENT_INTEGRITY_FAILED` when the stored file is not the one signed (sha256).",
               tags=("billing",), produces="application/pdf", answer_description="the signed PDF, raw",
               errors={403: "FORBIDDEN", 404: "NOT_FOUND or BILLING_PDF_NOT_READY",
                       409: "DOCUMENT_INTEGRITY_FAILED"})
    def on_get_document(self, req, resp, organization_id: str) -> None:
        filename, pdf = mandates.open_document(principal=req.context.principal, organization_id=organization_id,
                                               storage=self.storage)
        send_pdf(resp, pdf, filename)


def routes(deps) -> list[Route]:
    mandate = SelfBillingMandate(deps)
    return [
        Route(PATH, mandate, {"POST": BILLING_MANAGER, "GET": READERS, "DELETE": BILLING_MANAGER}),
        Route(f"{PATH}/document", mandate, READERS, suffix="document"),
    ]
