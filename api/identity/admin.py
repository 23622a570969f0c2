"""Admin routes of identity: users, organizations (printer provisioning and the list), the
security audit log, and the e-mail smoke test."""

from __future__ import annotations

from api.access import ADMIN, KYB_REVIEWER, PLATFORM_ADMIN, Route
from api.operations import operation
from backend.audit import list_security_events
from backend.email.messages import queue_email
from backend.identity import admin_users, organizations, squatting
from backend.identity.admin_lists import list_organizations, list_users, organization_for_admin
from backend.listing import ListParams
from backend.onboarding.kyb_documents import kyb_documents_of
from backend.onboarding.registry_check import registry_view
from schemas.identity.accounts import DoneOut
from schemas.identity.admin import (
    AdminOrganizationData,
    AdminOrganizationsPage,
    AdminOrganizationsQuery,
    AdminUserCreateIn,
    AdminUserData,
    AdminUsersPage,
    AdminUsersQuery,
    AdminUserUpdateIn,
    EmailSmokeIn,
    EmailSmokeOut,
    OrganizationDeleteIn,
    OrganizationReassignIn,
    SecurityAuditPage,
    SecurityAuditQuery,
)
from schemas.identity.organizations import OrganizationData, PrinterCreateIn

TAGS = ("admin",)


class AdminUsers:
    @operation("List users (admin)",
               description="Users, server-paginated (sortBy: createdAt, email, name; search on e-mail and name).",
               tags=TAGS, query=AdminUsersQuery, answer=AdminUsersPage, answer_description="a page")
    def on_get(self, req, resp, query: dict):
        return list_users(ListParams.from_query(query), role=query.get("role"), blocked=query.get("blocked"))

    @operation("Create a user (admin)",
               description="Create a user (a printer user, another admin ...), optionally a member of an "
                           "organization.",
               tags=TAGS, body=AdminUserCreateIn, answer=AdminUserData, status=201, answer_description="created",
               errors={404: "NOT_FOUND, no such organization", 409: "CONFLICT, the e-mail address is taken"})
    def on_post(self, req, resp, body: dict) -> dict:
        user = admin_users.create_user(
            email=body["email"], name=body["name"], password=body["password"], role=body["role"],
            organization_id=body["organizationId"], membership_role=body["membershipRole"],
            admin_user_id=req.context.principal.user_id,
        )
        return {"user": user}

    @operation("Update a user (admin)",
               description="Update a user's name, roles, granted permissions or blocked state (blocking revokes "
                           "every session of the user).",
               tags=TAGS, body=AdminUserUpdateIn, answer=AdminUserData, answer_description="the user",
               errors={404: "NOT_FOUND"})
    def on_patch_item(self, req, resp, user_id: str, body: dict) -> dict:
        return {"user": admin_users.update_user(user_id=user_id, admin_user_id=req.context.principal.user_id, **body)}


class AdminOrganizations:
    @operation("List organizations (admin)",
               description="Organizations, server-paginated, with filters (KYB status, actor type, SIRET "
                           "conflicts), search on name, SIREN and SIRET, and sortBy createdAt, legalName, siren, "
                           "siret, kybStatus, actorType.",
               tags=TAGS, query=AdminOrganizationsQuery, answer=AdminOrganizationsPage, answer_description="a page",
               errors={400: "VALIDATION_ERROR"})
    def on_get(self, req, resp, query: dict):
        return list_organizations(ListParams.from_query(query), kyb_status=query.get("kybStatus"),
                                  actor_type=query.get("actorType"), siret_conflict=query.get("siretConflict"))

    @operation("Create a printer organization (admin)",
               description="Provision a printer organization (printers never sign themselves up).",
               tags=TAGS, body=PrinterCreateIn, answer=OrganizationData, status=201, answer_description="created",
               errors={409: "CONFLICT"})
    def on_post(self, req, resp, body: dict) -> dict:
        organization = organizations.create_printer_organization(
            siren=body["siren"], legal_name=body["legalName"], admin_user_id=req.context.principal.user_id
        )
        return {"organization": organization}


class AdminOrganization:
    @operation("Organization detail (admin, permission kyb.review)",
               description="An organization with its billing profile, members, SIRET conflicts, the KYB "
                           "delegation documents to check before approving, and the company registry's extract "
                           "with what it decided about the signer.",
               tags=TAGS, answer=AdminOrganizationData, answer_description="the organization",
               errors={404: "NOT_FOUND"})
    def on_get(self, req, resp, organization_id: str) -> dict:
        organization = organization_for_admin(organization_id)
        organization.kyb_documents = kyb_documents_of(organization_id)
        organization.registry = registry_view(organization)
        return {"organization": organization}

    @operation("Delete an organization (admin, permission kyb.review)",
               description="Delete a squatted organization (its SIREN taken by someone else); audited.",
               tags=TAGS, body=OrganizationDeleteIn, answer=DoneOut, answer_description="deleted",
               errors={404: "NOT_FOUND", 409: "CONFLICT, the organization holds business records (reassign it)"})
    def on_delete(self, req, resp, organization_id: str, body: dict) -> dict:
        squatting.delete_organization(organization_id=organization_id, note=body["note"],
                                      actor_user_id=req.context.principal.user_id)
        return {"done": True}

    @operation("Reassign an organization (admin, permission kyb.review)",
               description="Hand a squatted organization to its rightful owner: the only member, as manager; "
                           "the billing profile and KYB status are dropped, the approved bank account voided "
                           "(the organization's unsent payouts and refunds held back, `creditor_account_voided`, "
                           "until an admin gives them the account approved for the owner); audited.",
               tags=TAGS, body=OrganizationReassignIn, answer=AdminOrganizationData,
               answer_description="the organization",
               errors={403: "FORBIDDEN, the new owner's e-mail address is not verified",
                       404: "NOT_FOUND, no such organization or user"})
    def on_post_reassign(self, req, resp, organization_id: str, body: dict) -> dict:
        squatting.reassign_organization(organization_id=organization_id, user_id=body["userId"],
                                        note=body["note"], actor_user_id=req.context.principal.user_id)
        return {"organization": organization_for_admin(organization_id)}


class SecurityAudit:
    @operation("Security audit log (admin)",
               description="The security audit log, newest first, server-paginated; filters by event family, "
                           "actor, target and date range (`from` inclusive, `to` exclusive); sortBy occurredAt or "
                           "event.",
               tags=TAGS, query=SecurityAuditQuery, answer=SecurityAuditPage, answer_description="a page")
    def on_get(self, req, resp, query: dict):
        return list_security_events(
            ListParams.from_query(query), family=query.get("event"), actor_user_id=query.get("actorUserId"),
            target_id=query.get("targetId"), since=query.get("since"), until=query.get("until"),
        )


class EmailSmoke:
    @operation("E-mail smoke test (permission platform.manage)",
               description="Queue a test e-mail (to the caller unless `to` is given).",
               tags=TAGS, body=EmailSmokeIn, body_required=False, answer=EmailSmokeOut,
               answer_description="queued")
    def on_post(self, req, resp, body: dict) -> dict:
        principal = req.context.principal
        to = body["to"] or principal.email
        message = queue_email("smoke_test", to=to, requester=principal.email)
        return {"emailId": message.id, "to": to}


def routes(deps) -> list[Route]:
    users, admin_organization = AdminUsers(), AdminOrganization()
    return [
        Route("/api/admin/users", users, ADMIN),
        Route("/api/admin/users/{user_id}", users, ADMIN, suffix="item"),
        Route("/api/admin/organizations", AdminOrganizations(), ADMIN),
        Route("/api/admin/organizations/{organization_id}", admin_organization, KYB_REVIEWER),
        Route("/api/admin/organizations/{organization_id}/reassign", admin_organization, KYB_REVIEWER,
              suffix="reassign"),
        Route("/api/admin/audit/security", SecurityAudit(), ADMIN),
        Route("/api/notifications/email-smoke", EmailSmoke(), PLATFORM_ADMIN),
    ]
