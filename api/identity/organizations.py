"""Organizations of API.md's Marketplace core: creation, detail, billing profile, KYB
submission, invitations. Membership is checked inside the services' queries (NOT_FOUND for an
organization of others), so the route rule is only "signed in"; these routes stay open while KYB
is not approved (they are how an organization gets approved)."""

from __future__ import annotations

from api.access import SESSION, Route
from api.requests import load
from api.responses import send
from backend.identity import invitations, organizations
from schemas.identity.organizations import (
    BillingProfileIn,
    BillingProfileOut,
    InvitationIn,
    InvitationOut,
    OrganizationCreateIn,
    OrganizationDetailOut,
)


def _send_organization(resp, organization, status: int = 200) -> None:
    send(resp, {"organization": OrganizationDetailOut().dump(organization)}, status)


class Organizations:
    def on_post(self, req, resp) -> None:
        """Create an industrial or distributor organization; the caller becomes its manager.
        ---
        summary: Create an organization (id `<actorType>:<siren>`, SIREN Luhn key checked)
        tags: [organizations]
        requestBody: {content: {application/json: {schema: OrganizationCreateIn}}}
        responses:
          201: {description: created; the session's active organization switches to it,
                content: {application/json: {schema: OrganizationEnvelope}}}
          409: {description: CONFLICT, the organization exists}
        """
        body = load(req, OrganizationCreateIn())
        organization = organizations.create_organization(
            actor_type=body["actorType"], siren=body["siren"], legal_name=body["legalName"],
            actor_user_id=req.context.principal.user_id, session_id=req.context.session_id,
        )
        _send_organization(resp, organization, 201)


class Organization:
    def on_get(self, req, resp, organization_id: str) -> None:
        """An organization with its billing profile (members and admins; NOT_FOUND for others).
        ---
        summary: Organization detail
        tags: [organizations]
        responses:
          200: {description: the organization, content: {application/json: {schema: OrganizationEnvelope}}}
          404: {description: NOT_FOUND, unknown or not a member}
        """
        _send_organization(resp, organizations.organization_detail(req.context.principal, organization_id))

    def on_put_billing(self, req, resp, organization_id: str) -> None:
        """Create or replace the billing profile (manager or billing member, or admin).
        ---
        summary: Put the billing profile
        tags: [organizations]
        requestBody: {content: {application/json: {schema: BillingProfileIn}}}
        responses:
          200: {description: the billing profile, content: {application/json: {schema: BillingProfileEnvelope}}}
          400: {description: VALIDATION_ERROR (SIRET key or SIREN mismatch, VAT key, IBAN, phone)}
          403: {description: FORBIDDEN, a plain member}
          404: {description: NOT_FOUND, unknown or not a member}
        """
        body = load(req, BillingProfileIn())
        profile = organizations.put_billing_profile(principal=req.context.principal, organization_id=organization_id,
                                                    profile=body)
        send(resp, {"billingProfile": BillingProfileOut().dump(profile)})

    def on_post_kyb(self, req, resp, organization_id: str) -> None:
        """Submit the organization for KYB review (manager or admin; needs a billing profile).
        ---
        summary: Submit KYB
        tags: [organizations]
        responses:
          200: {description: KYB status `submitted`, content: {application/json: {schema: OrganizationEnvelope}}}
          409: {description: CONFLICT, already submitted, in review or approved, or no billing profile}
        """
        organization = organizations.submit_kyb(principal=req.context.principal, organization_id=organization_id)
        _send_organization(resp, organization)

    def on_post_invitations(self, req, resp, organization_id: str) -> None:
        """Invite a colleague by e-mail (manager or admin); the link is valid 7 days.
        ---
        summary: Invite to the organization
        tags: [organizations]
        requestBody: {content: {application/json: {schema: InvitationIn}}}
        responses:
          201: {description: invitation e-mailed, content: {application/json: {schema: InvitationEnvelope}}}
          403: {description: FORBIDDEN, not a manager}
        """
        body = load(req, InvitationIn())
        invitation = invitations.create_invitation(principal=req.context.principal, organization_id=organization_id,
                                                   email=body["email"], role=body["role"])
        send(resp, {"invitation": InvitationOut().dump(invitation)}, 201)


class InvitationAccept:
    def on_post(self, req, resp, token: str) -> None:
        """Join the organization of an invitation (signed in with the invited e-mail address).
        ---
        summary: Accept an invitation
        tags: [organizations]
        responses:
          200: {description: joined; it becomes the active organization,
                content: {application/json: {schema: OrganizationEnvelope}}}
          403: {description: FORBIDDEN, signed in with another e-mail address}
          404: {description: NOT_FOUND, unknown, expired or used invitation}
        """
        principal = req.context.principal
        organization = invitations.accept_invitation(token=token, principal=principal,
                                                     session_id=req.context.session_id)
        _send_organization(resp, organizations.organization_detail(principal, organization.id))


def routes(deps) -> list[Route]:
    item = Organization()
    return [
        Route("/api/organizations", Organizations(), SESSION),
        Route("/api/organizations/{organization_id}", item, SESSION),
        Route("/api/organizations/{organization_id}/billing-profile", item, SESSION, suffix="billing"),
        Route("/api/organizations/{organization_id}/kyb/submit", item, SESSION, suffix="kyb"),
        Route("/api/organizations/{organization_id}/invitations", item, SESSION, suffix="invitations"),
        Route("/api/invitations/{token}/accept", InvitationAccept(), SESSION),
    ]
