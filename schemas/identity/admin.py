"""Admin identity routes: users, organizations list, security audit list, e-mail smoke test."""

from __future__ import annotations

from datetime import UTC

from marshmallow import Schema, fields, validate

from backend import clock
from backend.audit import SECURITY_EVENT_SORTS
from backend.identity.admin_lists import ORGANIZATION_SORTS, USER_SORTS
from backend.identity.models import KYB_REVIEW_STATUSES
from backend.identity.permissions import MEMBERSHIP_ROLES, PERMISSIONS, ROLES
from schemas.common import JsonBoolean, PageQuery, enum_of, page_of, sort_by
from schemas.identity.accounts import UserOut
from schemas.identity.organizations import OrganizationDetailOut
from schemas.onboarding.envelopes import KybDocumentOut
from schemas.onboarding.registry import OrganizationRegistryOut


class AdminUserCreateIn(Schema):
    email = fields.Email(required=True, validate=validate.Length(max=320))
    name = fields.String(required=True, validate=validate.Length(min=1, max=200))
    password = fields.String(load_default=None, allow_none=True, validate=validate.Length(min=8, max=128),
                             metadata={"description": "omitted: the user signs in by magic link"})
    role = fields.String(required=True, validate=validate.OneOf(sorted(ROLES)))
    organizationId = fields.String(load_default=None, allow_none=True)
    membershipRole = fields.String(load_default=None, allow_none=True,
                                   validate=validate.OneOf(sorted(MEMBERSHIP_ROLES)),
                                   metadata={"description": "default member"})


class AdminUserUpdateIn(Schema):
    name = fields.String(validate=validate.Length(min=1, max=200))
    roles = fields.List(fields.String(validate=validate.OneOf(sorted(ROLES))))
    permissions = fields.List(fields.String(validate=validate.OneOf(sorted(PERMISSIONS))))
    blocked = JsonBoolean(metadata={"description": "true blocks the user and revokes all its sessions"})


class AdminUserOut(UserOut):
    permissions = fields.Function(lambda user: sorted(user.permissions), required=True)
    blocked = fields.Function(lambda user: user.blocked_at is not None, required=True)


class AdminUserData(Schema):
    user = fields.Nested(AdminUserOut, required=True)


class AdminUsersQuery(PageQuery):
    sortBy = sort_by(USER_SORTS, "createdAt")
    role = fields.String(validate=validate.OneOf(sorted(ROLES)))
    blocked = fields.Boolean()


class AdminOrganizationsQuery(PageQuery):
    sortBy = sort_by(ORGANIZATION_SORTS, "createdAt")
    kybStatus = fields.String(validate=validate.OneOf([*KYB_REVIEW_STATUSES, "none"]),
                              metadata={"description": "`none`: never submitted"})
    actorType = fields.String(validate=validate.OneOf(["industrial", "distributor", "printer"]))
    siretConflict = fields.Boolean(metadata={"description": "true: only organizations sharing a SIRET"})


class AdminOrganizationItem(Schema):
    id = fields.String(required=True)
    actorType = fields.String(attribute="actor_type", required=True)
    siren = fields.String(required=True)
    legalName = fields.String(attribute="legal_name", required=True)
    kybStatus = fields.String(attribute="kyb_status", allow_none=True, metadata=enum_of(KYB_REVIEW_STATUSES))
    siret = fields.String(allow_none=True)
    siretConflict = fields.Boolean(attribute="siret_conflict", required=True)
    createdAt = fields.Function(lambda o: clock.iso(o.created_at))


class OrganizationMemberOut(Schema):
    userId = fields.String(attribute="id", required=True)
    email = fields.String(required=True)
    name = fields.String(required=True)
    membershipRole = fields.String(attribute="membership_role", required=True)


class SiretConflictOut(Schema):
    id = fields.String(required=True)
    actorType = fields.String(attribute="actor_type", required=True)
    legalName = fields.String(attribute="legal_name", required=True)
    kybStatus = fields.String(attribute="kyb_status", allow_none=True, metadata=enum_of(KYB_REVIEW_STATUSES))


class AdminKybDocumentOut(KybDocumentOut):
    downloadUrl = fields.Function(
        lambda d: f"/api/admin/organizations/{d.organization_id}/kyb/documents/{d.document_type}", required=True)


class AdminOrganizationDetailOut(OrganizationDetailOut):
    members = fields.List(fields.Nested(OrganizationMemberOut), required=True)
    siretConflicts = fields.List(fields.Nested(SiretConflictOut), attribute="siret_conflicts", required=True,
                                 metadata={"description": "other organizations declaring the same SIRET"})
    kybDocuments = fields.List(fields.Nested(AdminKybDocumentOut), attribute="kyb_documents", required=True,
                               metadata={"description": "the delegation documents to check before approving"})
    registry = fields.Nested(OrganizationRegistryOut, required=True,
                             metadata={"description": "the company registry's extract and what it decided"})


class AdminOrganizationData(Schema):
    organization = fields.Nested(AdminOrganizationDetailOut, required=True)


class SecurityAuditQuery(PageQuery):
    sortBy = sort_by(SECURITY_EVENT_SORTS, "occurredAt")
    sortDir = fields.String(load_default="desc", validate=validate.OneOf(["asc", "desc"]))
    event = fields.String(validate=validate.Length(min=1, max=80),
                          metadata={"description": "an event or a family: `auth.sign_in` matches auth.sign_in.*"})
    actorUserId = fields.String()
    targetId = fields.String()
    since = fields.AwareDateTime(data_key="from", default_timezone=UTC, metadata={"description": "inclusive"})
    until = fields.AwareDateTime(data_key="to", default_timezone=UTC, metadata={"description": "exclusive"})


class SecurityEventOut(Schema):
    id = fields.Integer(required=True)
    occurredAt = fields.Function(lambda e: clock.iso(e.occurred_at), required=True)
    event = fields.String(required=True)
    actorUserId = fields.String(attribute="actor_user_id", allow_none=True)
    targetType = fields.String(attribute="target_type", allow_none=True)
    targetId = fields.String(attribute="target_id", allow_none=True)
    ip = fields.String(allow_none=True)
    userAgent = fields.String(attribute="user_agent", allow_none=True)
    requestId = fields.String(attribute="request_id", allow_none=True)
    details = fields.Dict()


class OrganizationReassignIn(Schema):
    userId = fields.String(required=True, validate=validate.Length(min=1, max=36),
                           metadata={"description": "the rightful owner (verified e-mail), made manager"})
    note = fields.String(required=True, validate=validate.Length(min=1, max=2000))


class OrganizationDeleteIn(Schema):
    note = fields.String(required=True, validate=validate.Length(min=1, max=2000))


class EmailSmokeIn(Schema):
    to = fields.Email(load_default=None, allow_none=True, metadata={"description": "default: the caller"})


class EmailSmokeOut(Schema):
    emailId = fields.String(required=True)
    to = fields.String(required=True)


AdminUsersPage = page_of(AdminUserOut, "AdminUsers")
AdminOrganizationsPage = page_of(AdminOrganizationItem, "AdminOrganizations")
SecurityAuditPage = page_of(SecurityEventOut, "SecurityAudit")
