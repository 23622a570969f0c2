"""Organizations of API.md's Marketplace core: creation, detail, billing profile, KYB
submission, invitations. Membership is checked inside the services' queries (NOT_FOUND for an
organization of others), so the route rule is only "signed in"; these routes stay open while KYB
is not approved (they are how an organization gets approved)."""

from __future__ import annotations

from api.access import SESSION, Route
from api.operations import operation
from backend.identity import invitations, organizations
from backend.onboarding import registry_check
from schemas.identity.organizations import (
    BillingProfileData,
    BillingProfileIn,
    InvitationData,
    InvitationIn,
    OrganizationCreateIn,
    OrganizationData,
)


class Organizations:
    @operation(
        "Create an organization (id `<actorType>:<siren>`, SIREN Luhn key checked)",
        description="Create an industrial or distributor organization; the caller becomes its manager.",
        tags=("organizations",),
        body=OrganizationCreateIn,
        answer=OrganizationData,
        answer_description="created; the session's active organization switches to it",
        status=201,
        errors={409: "CONFLICT"},
    )
    def on_post(self, req, resp, body: dict) -> dict:
        organization = organizations.create_organization(
            actor_type=body["actorType"], siren=body["siren"], legal_name=body["legalName"],
            actor_user_id=req.context.principal.user_id, session_id=req.context.session_id,
        )
        return {"organization": organization}


class Organization:
    def __init__(self, registry, cache_days: int) -> None:
        self.registry, self.cache_days = registry, cache_days

    @operation(
        "Organization detail",
        description="An organization with its billing profile (members and admins; NOT_FOUND for others).",
        tags=("organizations",),
        answer=OrganizationData,
        answer_description="the organization",
        errors={404: "NOT_FOUND"},
    )
    def on_get(self, req, resp, organization_id: str) -> dict:
        return {"organization": organizations.organization_detail(req.context.principal, organization_id)}

    @operation(
        "Put the billing profile",
        description=("Create or replace the billing profile (manager or billing member, or admin). "
                     "`signer.onRegistryExtract` is what the company registry says (the signer matched "
                     "against the representatives it lists); a client value is ignored."),
        tags=("organizations",),
        body=BillingProfileIn,
        answer=BillingProfileData,
        answer_description="the billing profile",
        errors={400: "VALIDATION_ERROR (SIRET key or SIREN mismatch, VAT key, IBAN, phone)", 403: "FORBIDDEN",
                404: "NOT_FOUND"},
    )
    def on_put_billing(self, req, resp, organization_id: str, body: dict) -> dict:
        profile = registry_check.put_checked_billing_profile(
            principal=req.context.principal, organization_id=organization_id, profile=body,
            registry=self.registry, cache_days=self.cache_days)
        return {"billingProfile": profile}

    @operation(
        "Submit KYB",
        description="Submit the organization for KYB review (manager or admin; needs a billing profile).",
        tags=("organizations",),
        answer=OrganizationData,
        answer_description="KYB status `submitted`",
        errors={409: "CONFLICT"},
    )
    def on_post_kyb(self, req, resp, organization_id: str) -> dict:
        return {"organization": organizations.submit_kyb(principal=req.context.principal,
                                                         organization_id=organization_id)}

    @operation(
        "Invite to the organization",
        description="Invite a colleague by e-mail (manager or admin); the link is valid 7 days.",
        tags=("organizations",),
        body=InvitationIn,
        answer=InvitationData,
        answer_description="invitation e-mailed",
        status=201,
        errors={403: "FORBIDDEN"},
    )
    def on_post_invitations(self, req, resp, organization_id: str, body: dict) -> dict:
        invitation = invitations.create_invitation(principal=req.context.principal, organization_id=organization_id,
                                                   email=body["email"], role=body["role"])
        return {"invitation": invitation}


class InvitationAccept:
    @operation(
        "Accept an invitation",
        description="Join the organization of an invitation (signed in with the invited e-mail address).",
        tags=("organizations",),
        answer=OrganizationData,
        answer_description="joined; it becomes the active organization",
        errors={403: "FORBIDDEN", 404: "NOT_FOUND"},
    )
    def on_post(self, req, resp, token: str) -> dict:
        principal = req.context.principal
        organization = invitations.accept_invitation(token=token, principal=principal,
                                                     session_id=req.context.session_id)
        return {"organization": organizations.organization_detail(principal, organization.id)}


def routes(deps) -> list[Route]:
    item = Organization(deps.registry, deps.config.registry_cache_days)
    return [
        Route("/api/organizations", Organizations(), SESSION),
        Route("/api/organizations/{organization_id}", item, SESSION),
        Route("/api/organizations/{organization_id}/billing-profile", item, SESSION, suffix="billing"),
        Route("/api/organizations/{organization_id}/kyb/submit", item, SESSION, suffix="kyb"),
        Route("/api/organizations/{organization_id}/invitations", item, SESSION, suffix="invitations"),
        Route("/api/invitations/{token}/accept", InvitationAccept(), SESSION),
    ]
