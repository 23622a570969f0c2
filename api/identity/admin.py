"""Admin routes of identity: users, organizations (printer provisioning and the list), the
security audit log, and the e-mail smoke test."""

from __future__ import annotations

from api.access import ADMIN, KYB_REVIEWER, PLATFORM_ADMIN, Route
from api.requests import load
from api.responses import send
from backend.audit import list_security_events
from backend.email.messages import queue_email
from backend.identity import admin_users, organizations
from backend.identity.admin_lists import list_organizations, list_users, organization_for_admin
from backend.listing import ListParams
from backend.onboarding.kyb_documents import kyb_documents_of
from schemas.identity.admin import (
    AdminOrganizationDetailOut,
    AdminOrganizationItem,
    AdminOrganizationsQuery,
    AdminUserCreateIn,
    AdminUserOut,
    AdminUsersQuery,
    AdminUserUpdateIn,
    EmailSmokeIn,
    SecurityAuditQuery,
    SecurityEventOut,
)
from schemas.identity.organizations import OrganizationDetailOut, PrinterCreateIn


def _query(req, schema) -> tuple[ListParams, dict]:
    """The list parameters and the remaining filters of a list's query string."""
    query = schema.load(dict(req.params))
    params = ListParams.from_query(query)
    filters = {k: v for k, v in query.items() if k not in ("page", "pageSize", "search", "sortBy", "sortDir")}
    return params, filters


class AdminUsers:
    def on_get(self, req, resp) -> None:
        """Users, server-paginated (sortBy: createdAt, email, name; search on e-mail and name).
        ---
        summary: List users (admin)
        tags: [admin]
        parameters:
          - {in: query, schema: AdminUsersQuery}
        responses:
          200: {description: a page, content: {application/json: {schema: AdminUsersEnvelope}}}
        """
        params, filters = _query(req, AdminUsersQuery())
        send(resp, list_users(params, **filters).as_dict(AdminUserOut().dump))

    def on_post(self, req, resp) -> None:
        """Create a user (a printer user, another admin ...), optionally a member of an organization.
        ---
        summary: Create a user (admin)
        tags: [admin]
        requestBody: {content: {application/json: {schema: AdminUserCreateIn}}}
        responses:
          201: {description: created, content: {application/json: {schema: AdminUserEnvelope}}}
          404: {description: NOT_FOUND, no such organization}
          409: {description: CONFLICT, the e-mail address is taken}
        """
        body = load(req, AdminUserCreateIn())
        user = admin_users.create_user(
            email=body["email"], name=body["name"], password=body["password"], role=body["role"],
            organization_id=body["organizationId"], membership_role=body["membershipRole"],
            admin_user_id=req.context.principal.user_id,
        )
        send(resp, {"user": AdminUserOut().dump(user)}, 201)

    def on_patch_item(self, req, resp, user_id: str) -> None:
        """Update a user's name, roles, granted permissions or blocked state (blocking revokes
        every session of the user).
        ---
        summary: Update a user (admin)
        tags: [admin]
        requestBody: {content: {application/json: {schema: AdminUserUpdateIn}}}
        responses:
          200: {description: the user, content: {application/json: {schema: AdminUserEnvelope}}}
          404: {description: NOT_FOUND, no such user}
        """
        body = load(req, AdminUserUpdateIn())
        user = admin_users.update_user(user_id=user_id, admin_user_id=req.context.principal.user_id, **body)
        send(resp, {"user": AdminUserOut().dump(user)})


class AdminOrganizations:
    def on_get(self, req, resp) -> None:
        """Organizations, server-paginated, with filters (KYB status, actor type, SIRET conflicts),
        search on name, SIREN and SIRET, and sortBy createdAt, legalName, siren, siret, kybStatus,
        actorType.
        ---
        summary: List organizations (admin)
        tags: [admin]
        parameters:
          - {in: query, schema: AdminOrganizationsQuery}
        responses:
          200: {description: a page, content: {application/json: {schema: AdminOrganizationsEnvelope}}}
          400: {description: VALIDATION_ERROR, e.g. an unknown sortBy}
        """
        params, filters = _query(req, AdminOrganizationsQuery())
        filters = {"kyb_status": filters.get("kybStatus"), "actor_type": filters.get("actorType"),
                   "siret_conflict": filters.get("siretConflict")}
        send(resp, list_organizations(params, **filters).as_dict(AdminOrganizationItem().dump))

    def on_post(self, req, resp) -> None:
        """Provision a printer organization (printers never sign themselves up).
        ---
        summary: Create a printer organization (admin)
        tags: [admin]
        requestBody: {content: {application/json: {schema: PrinterCreateIn}}}
        responses:
          201: {description: created, content: {application/json: {schema: OrganizationEnvelope}}}
          409: {description: CONFLICT, the organization exists}
        """
        body = load(req, PrinterCreateIn())
        organization = organizations.create_printer_organization(
            siren=body["siren"], legal_name=body["legalName"], admin_user_id=req.context.principal.user_id
        )
        send(resp, {"organization": OrganizationDetailOut().dump(organization)}, 201)


class AdminOrganization:
    def on_get(self, req, resp, organization_id: str) -> None:
        """An organization with its billing profile, members, SIRET conflicts and KYB delegation documents.
        ---
        summary: Organization detail (admin, permission kyb.review)
        tags: [admin]
        responses:
          200: {description: the organization, content: {application/json: {schema: AdminOrganizationEnvelope}}}
          404: {description: NOT_FOUND}
        """
        organization = organization_for_admin(organization_id)
        organization.kyb_documents = kyb_documents_of(organization_id)
        send(resp, {"organization": AdminOrganizationDetailOut().dump(organization)})


class SecurityAudit:
    def on_get(self, req, resp) -> None:
        """The security audit log, newest first, server-paginated; filters by event family, actor,
        target and date range (`from` inclusive, `to` exclusive); sortBy occurredAt or event.
        ---
        summary: Security audit log (admin)
        tags: [admin]
        parameters:
          - {in: query, schema: SecurityAuditQuery}
        responses:
          200: {description: a page, content: {application/json: {schema: SecurityAuditEnvelope}}}
        """
        params, filters = _query(req, SecurityAuditQuery())
        page = list_security_events(
            params, family=filters.get("event"), actor_user_id=filters.get("actorUserId"),
            target_id=filters.get("targetId"), since=filters.get("since"), until=filters.get("until"),
        )
        send(resp, page.as_dict(SecurityEventOut().dump))


class EmailSmoke:
    def on_post(self, req, resp) -> None:
        """Queue a test e-mail (to the caller unless `to` is given).
        ---
        summary: E-mail smoke test (permission platform.manage)
        tags: [admin]
        requestBody: {content: {application/json: {schema: EmailSmokeIn}}}
        responses:
          200: {description: queued, content: {application/json: {schema: EmailSmokeEnvelope}}}
        """
        principal = req.context.principal
        to = load(req, EmailSmokeIn())["to"] or principal.email
        message = queue_email("smoke_test", to=to, requester=principal.email)
        send(resp, {"emailId": message.id, "to": to})


def routes(deps) -> list[Route]:
    users = AdminUsers()
    return [
        Route("/api/admin/users", users, ADMIN),
        Route("/api/admin/users/{user_id}", users, ADMIN, suffix="item"),
        Route("/api/admin/organizations", AdminOrganizations(), ADMIN),
        Route("/api/admin/organizations/{organization_id}", AdminOrganization(), KYB_REVIEWER),
        Route("/api/admin/audit/security", SecurityAudit(), ADMIN),
        Route("/api/notifications/email-smoke", EmailSmoke(), PLATFORM_ADMIN),
    ]
